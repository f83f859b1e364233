// SPDX-License-Identifier: Apache-2.0
// Devices, ports and GID tables through libibverbs (ibv_query_device/port, ibv_query_gid_table).
#include <endian.h>
#include <fmt/format.h>
#include <infiniband/verbs.h>
#include <net/if.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "discovery_internal.h"
#include "railscope/ibv/handles.h"
#include "railscope/node/mtu.h"

namespace railscope::node {
namespace {

std::string guid_text(__be64 be) {
  const uint64_t v = be64toh(be);
  return fmt::format("{:04x}:{:04x}:{:04x}:{:04x}", (v >> 48) & 0xffff, (v >> 32) & 0xffff,
                     (v >> 16) & 0xffff, v & 0xffff);
}

// active_speed_ex exists only in newer rdma-core (≥ 48); 0 where the header has no such field.
template <typename Attr>
uint32_t speed_ex_bits(const Attr& a) {
  if constexpr (requires { a.active_speed_ex; }) return static_cast<uint32_t>(a.active_speed_ex);
  return 0;
}

LinkLayer link_layer_of(uint8_t ll) {
  switch (ll) {
    case IBV_LINK_LAYER_INFINIBAND: return LinkLayer::InfiniBand;
    case IBV_LINK_LAYER_ETHERNET: return LinkLayer::Ethernet;
    case IBV_LINK_LAYER_UNSPECIFIED: return LinkLayer::InfiniBand;  // old drivers: IB
    default: return LinkLayer::Unknown;
  }
}

GidType gid_type_of(uint32_t t) {
  switch (t) {
    case IBV_GID_TYPE_IB: return GidType::IB;
    case IBV_GID_TYPE_ROCE_V1: return GidType::RoceV1;
    case IBV_GID_TYPE_ROCE_V2: return GidType::RoceV2;
    default: return GidType::Unknown;
  }
}

}  // namespace

bool read_device_from_verbs(const Sysfs& sysfs, ibv_device* ibdev, Device& dev, std::string* error) {
  const ibv::Api* v = ibv::api();
  if (v == nullptr) {
    *error = ibv::load_error();
    return false;
  }
  ibv::UniqueContext ctx(v->open_device(ibdev));
  if (!ctx) {
    *error = fmt::format("ibv_open_device({}): {}", dev.name, std::strerror(errno));
    return false;
  }
  ibv_device_attr da{};
  if (int rc = v->query_device(ctx.get(), &da); rc != 0) {
    *error = fmt::format("ibv_query_device({}): {}", dev.name, std::strerror(rc));
    return false;
  }
  dev.fw_ver = da.fw_ver;
  dev.node_guid = guid_text(da.node_guid);
  dev.sys_image_guid = guid_text(da.sys_image_guid);
  if (dev.vendor.empty()) dev.vendor = fmt::format("{:#x}", da.vendor_id);
  if (dev.vendor_part.empty()) dev.vendor_part = fmt::format("{:#x}", da.vendor_part_id);
  dev.max_qp = da.max_qp;

  std::vector<Port> ports;
  size_t total_gids = 0;
  for (int pn = 1; pn <= da.phys_port_cnt; ++pn) {
    ibv_port_attr pa{};
    Port p;
    p.number = pn;
    if (int rc = ibv::query_port(*v, ctx.get(), static_cast<uint8_t>(pn), &pa); rc != 0) {
      dev.notes.push_back(fmt::format("ibv_query_port({}:{}): {}", dev.name, pn, std::strerror(rc)));
      ports.push_back(std::move(p));
      continue;
    }
    p.state = static_cast<PortState>(pa.state <= IBV_PORT_ACTIVE_DEFER ? static_cast<int>(pa.state) : -1);
    p.phys_state = pa.phys_state;
    p.link_layer = link_layer_of(pa.link_layer);
    p.active_mtu = ib_mtu_bytes(static_cast<int>(pa.active_mtu));
    p.max_mtu = ib_mtu_bytes(static_cast<int>(pa.max_mtu));
    p.width = width_from_ibv(pa.active_width);
    p.lane_mbps = lane_mbps_from_ibv(speed_bits_from_ibv(pa.active_speed, speed_ex_bits(pa)));
    p.speed_mbps = port_speed_mbps(pa.active_width, pa.active_speed, speed_ex_bits(pa));
    p.lid = pa.lid;
    p.gid_tbl_len = pa.gid_tbl_len;
    total_gids += static_cast<size_t>(std::max(pa.gid_tbl_len, 0));
    // Keep sysfs's rate text for comparison with ibv_devinfo / ibstat.
    for (const auto& sp : dev.ports)
      if (sp.number == pn) p.rate_text = sp.rate_text;
    ports.push_back(std::move(p));
  }

  // One call for every valid GID of every port; empty entries never cost anything.
  std::vector<ibv_gid_entry> entries(total_gids);
  ssize_t n = total_gids == 0
                  ? 0
                  : v->query_gid_table(ctx.get(), entries.data(), entries.size(), 0, sizeof(ibv_gid_entry));
  if (n >= 0) {
    for (ssize_t i = 0; i < n; ++i) {
      const ibv_gid_entry& e = entries[static_cast<size_t>(i)];
      if (e.gid_index >= kGidIndexEnd) continue;
      for (auto& p : ports) {
        if (p.number != static_cast<int>(e.port_num)) continue;
        GidEntry g;
        g.index = static_cast<GidIndex>(e.gid_index);
        std::memcpy(g.gid.raw.data(), e.gid.raw, 16);
        if (g.gid.is_zero()) break;
        g.type = gid_type_of(e.gid_type);
        if (p.link_layer == LinkLayer::InfiniBand) g.type = GidType::IB;
        char ifname[IF_NAMESIZE] = {};
        if (e.ndev_ifindex != 0 && if_indextoname(e.ndev_ifindex, ifname) != nullptr) g.netdev = ifname;
        p.gids.push_back(std::move(g));
        break;
      }
    }
    for (auto& p : ports)
      std::sort(p.gids.begin(), p.gids.end(),
                [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
  } else {
    dev.notes.push_back(fmt::format("ibv_query_gid_table({}): {}; GIDs read from sysfs", dev.name,
                                    std::strerror(static_cast<int>(-n))));
    for (auto& p : ports)
      p.gids = read_gids_from_sysfs(sysfs, dev.name, p.number, p.link_layer, p.gid_tbl_len);
  }
  for (auto& p : ports) fill_netdev(sysfs, dev.name, p);
  dev.ports = std::move(ports);
  return true;
}

}  // namespace railscope::node
