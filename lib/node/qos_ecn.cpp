// SPDX-License-Identifier: Apache-2.0
// ECN for RoCE per priority from NVIDIA's mlx5 sysfs files (layout and source in qos_sysfs.h).
#include <fmt/format.h>

#include "railscope/node/qos_sysfs.h"
#include "railscope/node/sysfs.h"

namespace railscope::node {
namespace {

bool plain_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos;
}

std::optional<bool> read_flag(const Sysfs& sysfs, const std::string& rel) {
  const auto text = sysfs.read(rel);
  if (text == "1") return true;
  if (text == "0") return false;
  return std::nullopt;
}

}  // namespace

bool RoceEcn::known() const {
  for (int p = 0; p < kPriorities; ++p)
    if (np[static_cast<size_t>(p)] || rp[static_cast<size_t>(p)]) return true;
  return false;
}

std::optional<bool> RoceEcn::enabled(int prio) const {
  if (prio < 0 || prio >= kPriorities) return std::nullopt;
  const auto& n = np[static_cast<size_t>(prio)];
  const auto& r = rp[static_cast<size_t>(prio)];
  if ((n && !*n) || (r && !*r)) return false;  // one known "off" is enough to say off
  if (n && r) return true;
  return std::nullopt;
}

RoceEcn read_roce_ecn(const Sysfs& sysfs, std::string_view netdev) {
  RoceEcn ecn;
  if (!plain_name(netdev)) return ecn;
  for (int p = 0; p < kPriorities; ++p) {
    ecn.np[static_cast<size_t>(p)] =
        read_flag(sysfs, fmt::format("class/net/{}/ecn/roce_np/enable/{}", netdev, p));
    ecn.rp[static_cast<size_t>(p)] =
        read_flag(sysfs, fmt::format("class/net/{}/ecn/roce_rp/enable/{}", netdev, p));
  }
  return ecn;
}

}  // namespace railscope::node
