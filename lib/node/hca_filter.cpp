// SPDX-License-Identifier: Apache-2.0
// NCCL_IB_HCA parsing and matching with NCCL's rules (see hca_filter.h).
#include "railscope/node/hca_filter.h"

#include <cctype>

#include "railscope/node/name_list.h"

namespace railscope::node {
namespace {

// atoi semantics: optional sign, leading digits; anything else reads as 0.
int atoi_like(std::string_view s, bool* clean) {
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  long v = 0;
  const size_t first_digit = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && v < 100000)
    v = v * 10 + (s[i++] - '0');
  *clean = i == s.size() && i > first_digit;
  return static_cast<int>(neg ? -v : v);
}

}  // namespace

HcaFilter parse_hca_filter(std::string_view text) {
  HcaFilter f;
  f.text = std::string(text);
  const NameList list = parse_name_list(text);
  f.exclude = list.exclude;
  f.exact = list.exact;
  for (std::string_view item : list.items) {
    HcaSpec spec;
    const size_t colon = item.find(':');
    if (colon != std::string_view::npos) {
      bool clean = false;
      spec.port = atoi_like(item.substr(colon + 1), &clean);
      if (!clean)
        f.warnings.push_back("port '" + std::string(item.substr(colon + 1)) + "' in '" + std::string(item) +
                             "' is not a number; NCCL reads it as " + std::to_string(spec.port));
      item = item.substr(0, colon);
    }
    if (item.empty()) continue;  // NCCL drops items without a name, port included
    if (static_cast<int>(f.specs.size()) == kMaxHcaItems) {
      f.warnings.push_back("more than " + std::to_string(kMaxHcaItems) + " items; NCCL ignores the rest");
      break;
    }
    spec.name = std::string(item);
    f.specs.push_back(std::move(spec));
  }
  return f;
}

bool HcaFilter::selects(std::string_view device, int port) const {
  bool listed = specs.empty();  // NCCL: an empty list matches everything
  for (const auto& s : specs) {
    const bool name_ok = name_matches(device, s.name, exact);
    const bool port_ok = s.port == -1 || port == -1 || s.port == port;
    if (name_ok && port_ok) {
      listed = true;
      break;
    }
  }
  return listed != exclude;
}

}  // namespace railscope::node
