// SPDX-License-Identifier: Apache-2.0
// The verbs engine's port and GID choice over lib/node's inventory (see port_policy.h). Finding ids and
// texts are the engine's contract with its tests and users: device.none, device.filtered_out,
// port.down, gid.* (from node::select_gid), gid.none_usable.
#include "plugin/net/verbs/setup/port_policy.h"

#include <fmt/format.h>

#include "railscope/node/mtu.h"
#include "railscope/node/sysfs.h"

namespace railscope::net::verbs {
namespace {

bool usable_link(node::LinkLayer l) {
  return l == node::LinkLayer::Ethernet || l == node::LinkLayer::InfiniBand;
}

}  // namespace

PortSelection select_ports(const node::Inventory& inventory, const node::HcaFilter& hca,
                           const node::GidPolicy& policy) {
  PortSelection out;
  const node::Sysfs sysfs(inventory.sysfs_root);
  int seen = 0, filtered = 0, down = 0;
  std::string down_names;
  for (const node::Device& dev : inventory.devices) {
    for (const node::Port& port : dev.ports) {
      ++seen;
      if (!hca.selects(dev.name, port.number)) {
        ++filtered;
        continue;
      }
      if (!port.active() || !usable_link(port.link_layer)) {
        ++down;
        down_names += fmt::format(" {}:{}", dev.name, port.number);
        continue;
      }
      const std::string where = fmt::format("{}:{}", dev.name, port.number);
      node::GidChoice choice = node::select_gid(port.link_layer, port.gid_tbl_len, port.gids, policy, where);
      for (auto& f : choice.findings) out.findings.push_back(std::move(f));
      if (!choice.entry) {
        if (choice.findings.empty())
          out.findings.push_back(
              diag::make("gid.none_usable", fmt::format("no GID at index {} on {}", choice.index, where)));
        continue;
      }
      node::PortRecord record;
      record.dev_name = dev.name;
      record.port = port.number;
      record.link_layer = port.link_layer;
      record.gid_index = choice.entry->index;
      record.gid = choice.entry->gid;
      record.gid_type = choice.entry->type;
      record.netdev = choice.entry->netdev;
      record.netdev_mtu =
          record.netdev == port.netdev ? port.netdev_mtu : node::read_netdev_mtu(sysfs, record.netdev);
      record.active_mtu = port.active_mtu;
      record.lid = static_cast<uint16_t>(port.lid);
      record.speed_mbps = port.speed_mbps;
      record.pci_path = dev.is_virtual ? std::string() : dev.pci_path;
      out.ports.push_back(std::move(record));
    }
  }
  if (!out.ports.empty()) return out;
  if (inventory.devices.empty())
    out.failure = Status::fail(
        ncclSystemError, "device.none",
        fmt::format("libibverbs lists no RDMA device ({})",
                    inventory.verbs_error.empty() ? std::string("0 devices") : inventory.verbs_error));
  else if (seen > 0 && filtered == seen)
    out.failure = Status::fail(ncclSystemError, "device.filtered_out",
                               fmt::format("NCCL_IB_HCA selects none of the {} RDMA ports present", seen));
  else if (down > 0)
    out.failure = Status::fail(ncclSystemError, "port.down",
                               fmt::format("no active RDMA port; inactive:{}", down_names));
  else
    out.failure =
        Status::fail(ncclSystemError, "device.none", "no usable RDMA port (no usable GID on any port)");
  return out;
}

}  // namespace railscope::net::verbs
