// SPDX-License-Identifier: Apache-2.0
// NCCL's '^' / '=' name-list grammar (see name_list.h).
#include "railscope/node/name_list.h"

namespace railscope::node {

NameList parse_name_list(std::string_view text) {
  NameList l;
  if (!text.empty() && text.front() == '^') {
    l.exclude = true;
    text.remove_prefix(1);
  }
  if (!text.empty() && text.front() == '=') {
    l.exact = true;
    text.remove_prefix(1);
  }
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    if (!item.empty()) l.items.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return l;
}

}  // namespace railscope::node
