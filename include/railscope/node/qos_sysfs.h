// SPDX-License-Identifier: Apache-2.0
// The two per-port QoS facts that live in files rather than in DCB:
//
// - ECN for RoCE per priority, as NVIDIA's mlx5 driver exposes it (MLNX_OFED / DOCA-OFED, "Explicit
//   Congestion Notification (ECN)", https://docs.nvidia.com/networking/display/mlnxofedv23041130/
//   explicit+congestion+notification+(ecn)): /sys/class/net/<if>/ecn/roce_np/enable/<prio> (the
//   notification point: the receiver that answers ECN-marked packets with CNPs) and .../roce_rp/enable/
//   <prio> (the reaction point: the sender that slows down on CNPs, DCQCN), each "1" or "0".
//   Absent on other drivers and on the inbox mlx5 driver (firmware default then): unknown, never "off".
// - rdma_cm's default RoCE ToS (Documentation/ABI/testing/configfs-rdma_cm in the kernel):
//   /sys/kernel/config/rdma_cm/<dev>/ports/<port>/default_roce_tos. The <dev> group exists only after
//   someone ran `mkdir` there (e.g. `cma_roce_tos`); railscope only reads and never creates it, so an
//   absent group is "unknown". It applies to rdma_cm connections (NVMe-oF, UCX/MPI over rdma_cm), not
//   to NCCL, which sets its QPs' traffic class from NCCL_IB_TC itself.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace railscope::node {

class Sysfs;

inline constexpr int kPriorities = 8;  // IEEE 802.1Q priorities 0..7

struct RoceEcn {
  std::array<std::optional<bool>, kPriorities> np;  // notification point, per priority
  std::array<std::optional<bool>, kPriorities> rp;  // reaction point, per priority
  bool known() const;                               // any file was read
  // Both points on for prio: true / false when both are known, nullopt otherwise.
  std::optional<bool> enabled(int prio) const;
};

// Reads class/net/<netdev>/ecn/roce_{np,rp}/enable/<0..7>; everything unknown when the netdev name is
// not a plain name or the files are absent/garbage.
RoceEcn read_roce_ecn(const Sysfs& sysfs, std::string_view netdev);

// kernel/config/rdma_cm/<device>/ports/<port>/default_roce_tos (0..255); nullopt when absent or garbage.
std::optional<int> read_default_roce_tos(const Sysfs& sysfs, std::string_view device, int port);

}  // namespace railscope::node
