// SPDX-License-Identifier: Apache-2.0
// rdma_cm's default RoCE ToS from configfs (read only; see qos_sysfs.h for why the group may be absent).
#include <fmt/format.h>

#include "railscope/node/qos_sysfs.h"
#include "railscope/node/sysfs.h"

namespace railscope::node {

std::optional<int> read_default_roce_tos(const Sysfs& sysfs, std::string_view device, int port) {
  if (device.empty() || device == "." || device == ".." || device.find('/') != std::string_view::npos ||
      port < 1 || port > 255)
    return std::nullopt;
  const auto v =
      sysfs.read_int(fmt::format("kernel/config/rdma_cm/{}/ports/{}/default_roce_tos", device, port));
  if (!v || *v < 0 || *v > 255) return std::nullopt;
  return static_cast<int>(*v);
}

}  // namespace railscope::node
