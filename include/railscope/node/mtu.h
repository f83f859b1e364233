// SPDX-License-Identifier: Apache-2.0
// MTU arithmetic for RoCE: which IB MTU a netdev MTU carries, and the checks on a port's active_mtu.
//
// The netdev MTU is the largest IP packet (L3, without the 14-byte Ethernet header and FCS). A RoCE v2
// packet spends part of it on headers before the IB payload (the "IB MTU"). railscope budgets the
// same worst case as the kernel's iboe_get_mtu() (include/rdma/ib_addr.h), which rdma_cm uses:
//   GRH / IPv6 header 40 (IPv4 needs only 20, but the budget is family-independent)
//   + UDP 8 + BTH 12 + XRC extended header 4 + AtomicETH 28 + ICRC 4 = 96 bytes.
// The IB MTU is the largest of 256, 512, 1024, 2048, 4096 that fits in (netdev MTU − 96):
//   1500 → 1404 → 1024;  9000 → 8904 → 4096;  4200 → 4104 → 4096;  2048 → 1952 → 1024.
// (The minimal IPv4 RC-write budget would be 20 + 8 + 12 + 4 = 44; it gives the same answer except for
// netdev MTUs in 4140..4191, 2092..2143, 1068..1119, 556..607 and 300..351.)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "railscope/core/diagnosis.h"

namespace railscope::node {

inline constexpr int kRoceHeaderBudget = 96;

// ibv_mtu enum (1..5) ↔ bytes (256..4096); 0 for anything else.
int ib_mtu_bytes(int ibv_mtu_enum);
int ib_mtu_enum(int bytes);

// The largest IB MTU in bytes a netdev MTU carries for RoCE v2; 0 when even 256 does not fit.
int roce_mtu_for_netdev(int netdev_mtu);

// The port's active_mtu against what its netdev MTU allows: mtu.above_netdev (error), mtu.below_netdev
// (warning), mtu.small (info, for a 1024 active_mtu coming from a 1500 netdev), or nothing.
// Unknown values (0) give nothing.
std::vector<diag::Finding> check_port_mtu(std::string_view where, int active_mtu, std::string_view netdev,
                                          int netdev_mtu);

struct PortMtu {
  std::string where;  // "rxe0:1"
  int active_mtu = 0;
};
// Several local RoCE ports with different active MTUs: a QP between two of them (or between this
// node and a peer configured like the other port) must use the smallest. One mtu.mismatch finding,
// or nothing when all known MTUs agree.
std::optional<diag::Finding> check_local_mtu_mismatch(const std::vector<PortMtu>& ports);

}  // namespace railscope::node
