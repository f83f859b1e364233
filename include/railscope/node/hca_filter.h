// SPDX-License-Identifier: Apache-2.0
// NCCL_IB_HCA: which RDMA devices and ports to use, with NCCL's syntax and matching rules.
//   "mlx5"            prefix match: every device whose name starts with "mlx5", all ports
//   "=mlx5_0:1,mlx5_1" exact device names; ":N" restricts to port N
//   "^mlx5_2"         exclude (may be combined: "^=mlx5_2")
// Parsing follows NCCL: items are split at ',', the text after ':' is read like atoi (so a
// non-number port reads as 0, which matches no port), empty items are dropped, at most 32 items.
// An empty list selects everything; "^" with an empty list excludes everything.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace railscope::node {

struct HcaSpec {
  std::string name;  // prefix, or exact name when the filter is exact
  int port = -1;     // -1 = any port
};

struct HcaFilter {
  std::string text;  // as given
  bool exclude = false;
  bool exact = false;
  std::vector<HcaSpec> specs;
  std::vector<std::string> warnings;  // odd input: non-numeric port, too many items, ...

  // True when the filter is unset (selects every device and port).
  bool unset() const { return text.empty(); }
  // Whether NCCL would use port `port` of device `device`.
  bool selects(std::string_view device, int port) const;
};

HcaFilter parse_hca_filter(std::string_view text);

// NCCL's limit on parsed items (MAX_IB_DEVS).
inline constexpr int kMaxHcaItems = 32;

}  // namespace railscope::node
