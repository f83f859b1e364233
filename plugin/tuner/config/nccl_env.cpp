// SPDX-License-Identifier: Apache-2.0
#include "plugin/tuner/config/nccl_env.h"

#include <fmt/format.h>

#include <vector>

namespace railscope::tuner {
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return out;
}

}  // namespace

std::optional<std::array<uint32_t, kNumColls>> parse_nccl_list(std::string_view value, bool algorithms,
                                                               std::string* error) {
  const int n_elems = algorithms ? kNumAlgos : kNumProtos;
  const uint32_t all = (1u << n_elems) - 1;
  std::array<uint32_t, kNumColls> enabled;
  enabled.fill(all);
  const auto sections = split(value, ';');
  for (size_t i = 0; i < sections.size(); ++i) {
    std::string_view section = sections[i];
    if (section.empty()) continue;
    uint32_t colls = (1u << kNumColls) - 1;
    if (const size_t colon = section.find(':'); colon != std::string_view::npos) {
      const auto c = parse_coll(section.substr(0, colon));
      if (!c) {
        if (error) *error = fmt::format("unknown collective prefix '{}'", section.substr(0, colon));
        return std::nullopt;
      }
      colls = 1u << *c;
      section = section.substr(colon + 1);
    } else if (i != 0) {
      if (error) *error = "every entry but the first needs a collective prefix";
      return std::nullopt;
    }
    const bool negate = !section.empty() && section.front() == '^';
    if (negate) section.remove_prefix(1);
    uint32_t named = 0;
    for (std::string_view elem : split(section, ',')) {
      const auto e = algorithms ? parse_algo(elem) : parse_proto(elem);
      if (!e) {
        if (error) *error = fmt::format("unknown {} '{}'", algorithms ? "algorithm" : "protocol", elem);
        return std::nullopt;
      }
      named |= 1u << *e;
    }
    for (int c = 0; c < kNumColls; ++c)
      if (colls >> c & 1u) enabled[static_cast<size_t>(c)] = negate ? (all & ~named) : named;
  }
  return enabled;
}

UserRestrictions restrictions_from(std::optional<std::string> nccl_algo,
                                   std::optional<std::string> nccl_proto) {
  UserRestrictions r;
  const struct {
    const char* name;
    const std::optional<std::string>& value;
    bool algorithms;
  } vars[] = {{"NCCL_ALGO", nccl_algo, true}, {"NCCL_PROTO", nccl_proto, false}};
  for (const auto& v : vars) {
    if (!v.value) continue;
    std::string error;
    const auto enabled = parse_nccl_list(*v.value, v.algorithms, &error);
    const uint32_t all = (1u << (v.algorithms ? kNumAlgos : kNumProtos)) - 1;
    for (int c = 0; c < kNumColls; ++c) {
      if (enabled && (*enabled)[static_cast<size_t>(c)] == all) continue;
      r.restricted[c] = true;
      if (r.why[c].empty()) r.why[c] = fmt::format("{}={}", v.name, *v.value);
    }
    if (!enabled)
      r.warning += fmt::format("{}{}={}: {}; leaving every collective to NCCL", r.warning.empty() ? "" : "; ",
                               v.name, *v.value, error);
  }
  return r;
}

}  // namespace railscope::tuner
