// SPDX-License-Identifier: Apache-2.0
// RoCE MTU arithmetic and the active_mtu checks (header budget documented in mtu.h).
#include "railscope/node/mtu.h"

#include <fmt/format.h>

#include <algorithm>

namespace railscope::node {

int ib_mtu_bytes(int ibv_mtu_enum) {
  if (ibv_mtu_enum < 1 || ibv_mtu_enum > 5) return 0;
  return 128 << ibv_mtu_enum;
}

int ib_mtu_enum(int bytes) {
  for (int e = 1; e <= 5; ++e)
    if (ib_mtu_bytes(e) == bytes) return e;
  return 0;
}

int roce_mtu_for_netdev(int netdev_mtu) {
  const int payload = netdev_mtu - kRoceHeaderBudget;
  for (int bytes = 4096; bytes >= 256; bytes /= 2)
    if (payload >= bytes) return bytes;
  return 0;
}

std::vector<diag::Finding> check_port_mtu(std::string_view where, int active_mtu, std::string_view netdev,
                                          int netdev_mtu) {
  std::vector<diag::Finding> out;
  if (active_mtu <= 0 || netdev_mtu <= 0) return out;
  const int allowed = roce_mtu_for_netdev(netdev_mtu);
  const std::string facts =
      fmt::format("{}: active_mtu {}, netdev {} MTU {} carries at most {} (MTU - {} header bytes)", where,
                  active_mtu, netdev, netdev_mtu, allowed, kRoceHeaderBudget);
  if (active_mtu > allowed) {
    out.push_back(diag::make("mtu.above_netdev", facts,
                             fmt::format("Raise {}'s MTU to at least {} or lower the port MTU", netdev,
                                         active_mtu + kRoceHeaderBudget)));
  } else if (active_mtu < allowed) {
    out.push_back(diag::make("mtu.below_netdev", facts));
  } else if (active_mtu < 4096) {
    out.push_back(
        diag::make("mtu.small", facts,
                   fmt::format("Set MTU 9000 on {} (and the switch ports) for active_mtu 4096", netdev)));
  }
  return out;
}

std::optional<diag::Finding> check_local_mtu_mismatch(const std::vector<PortMtu>& ports) {
  int lo = 0;
  int hi = 0;
  std::string list;
  for (const auto& p : ports) {
    if (p.active_mtu <= 0) continue;
    lo = lo == 0 ? p.active_mtu : std::min(lo, p.active_mtu);
    hi = std::max(hi, p.active_mtu);
    list += fmt::format("{}{} {}", list.empty() ? "" : ", ", p.where, p.active_mtu);
  }
  if (lo == hi) return std::nullopt;
  return diag::make(
      "mtu.mismatch",
      fmt::format("RoCE ports have different active MTUs ({}): a QP between these ports must use "
                  "{}; a peer that uses {} loses every large packet",
                  list, lo, hi),
      fmt::format("Give every RoCE netdev the same MTU (here: raise the smaller ones so all reach "
                  "active_mtu {}); railscope uses min(local, remote) = {} meanwhile",
                  hi, lo));
}

}  // namespace railscope::node
