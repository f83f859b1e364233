// SPDX-License-Identifier: Apache-2.0
// NCCL's name-list grammar, shared by NCCL_IB_HCA (hca_filter.h) and NCCL_SOCKET_IFNAME (the net
// plugin's TCP engine): an optional leading '^' (exclude the listed names), then an optional '='
// (names are exact, not prefixes), then items separated by ','. Empty items are dropped. What an item
// means beyond its name (NCCL_IB_HCA's ":port") is the caller's business.
//   "mlx5"      prefix: every name starting with "mlx5"
//   "=eth0,ib0" exact names
//   "^docker"   everything but names starting with "docker" ("^=" excludes exact names)
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace railscope::node {

struct NameList {
  bool exclude = false;            // leading '^'
  bool exact = false;              // '=' (after any '^')
  std::vector<std::string> items;  // in order, non-empty
};

NameList parse_name_list(std::string_view text);

// Whether `name` matches one item of a list: equal to it (exact lists) or starting with it.
inline bool name_matches(std::string_view name, std::string_view item, bool exact) {
  return exact ? name == item : name.starts_with(item);
}

}  // namespace railscope::node
