// SPDX-License-Identifier: Apache-2.0
// Devices, ports and GID tables as sysfs describes them (class/infiniband, class/net).
#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

#include "discovery_internal.h"
#include "railscope/node/inventory.h"
#include "railscope/node/sysfs.h"

namespace railscope::node {
namespace {

std::optional<int> port_number(const std::string& name) {
  int v = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), v);
  if (ec != std::errc() || end != name.data() + name.size() || v <= 0 || v > 255) return std::nullopt;
  return v;
}

LinkLayer parse_link_layer(const std::optional<std::string>& s) {
  if (!s) return LinkLayer::Unknown;
  if (*s == "InfiniBand") return LinkLayer::InfiniBand;
  if (*s == "Ethernet") return LinkLayer::Ethernet;
  return LinkLayer::Unknown;
}

}  // namespace

int64_t mbps_from_rate_text(std::string_view text) {
  // "<number> Gb/sec (...)"; the number may carry a fraction ("2.5").
  size_t i = 0;
  int64_t whole = 0;
  int digits = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' && whole < 100000000) {
    whole = whole * 10 + (text[i++] - '0');
    ++digits;
  }
  if (digits == 0) return 0;
  int64_t frac_milli = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    int64_t scale = 100;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      frac_milli += (text[i++] - '0') * scale;
      scale /= 10;
    }
  }
  if (text.substr(i).find("Gb/sec") == std::string_view::npos) return 0;
  return whole * 1000 + frac_milli;
}

std::vector<GidEntry> read_gids_from_sysfs(const Sysfs& sysfs, const std::string& device, int port,
                                           LinkLayer link_layer, int limit) {
  const std::string base = fmt::format("class/infiniband/{}/ports/{}", device, port);
  if (limit <= 0) {
    for (const auto& n : sysfs.list(base + "/gids"))
      if (auto v = parse_leading_int(n); v && *v >= 0 && *v < 65536)
        limit = std::max(limit, static_cast<int>(*v) + 1);
  }
  std::vector<GidEntry> out;
  for (int i = 0; i < std::min(limit, kGidIndexEnd); ++i) {
    auto text = sysfs.read(fmt::format("{}/gids/{}", base, i));
    if (!text) continue;
    auto gid = Gid::parse(*text);
    if (!gid || gid->is_zero()) continue;  // empty entries: skipped before touching their attributes
    GidEntry e;
    e.index = static_cast<GidIndex>(i);
    e.gid = *gid;
    if (auto t = sysfs.read(fmt::format("{}/gid_attrs/types/{}", base, i)))
      e.type = parse_gid_type(*t, link_layer == LinkLayer::InfiniBand);
    if (auto nd = sysfs.read(fmt::format("{}/gid_attrs/ndevs/{}", base, i))) e.netdev = *nd;
    out.push_back(std::move(e));
  }
  return out;
}

void fill_netdev(const Sysfs& sysfs, const std::string& device, Port& p) {
  if (p.link_layer == LinkLayer::InfiniBand) return;
  for (const auto& g : p.gids)
    if (!g.netdev.empty()) {
      p.netdev = g.netdev;
      break;
    }
  if (p.netdev.empty()) {
    // The GID table may be empty (no address yet); index 0 still names the netdev on RoCE.
    if (auto nd = sysfs.read(fmt::format("class/infiniband/{}/ports/{}/gid_attrs/ndevs/0", device, p.number)))
      p.netdev = *nd;
  }
  if (p.netdev.find('/') != std::string::npos) p.netdev.clear();
  p.netdev_mtu = read_netdev_mtu(sysfs, p.netdev);
}

int read_netdev_mtu(const Sysfs& sysfs, std::string_view netdev) {
  if (netdev.empty() || netdev == "." || netdev == ".." || netdev.find('/') != std::string_view::npos)
    return 0;
  if (auto mtu = sysfs.read_int(fmt::format("class/net/{}/mtu", netdev)); mtu && *mtu > 0 && *mtu < 1000000)
    return static_cast<int>(*mtu);
  return 0;
}

Device read_device_from_sysfs(const Sysfs& sysfs, const std::string& name, bool read_gids) {
  Device d;
  d.name = name;
  const std::string base = "class/infiniband/" + name;
  auto note_missing = [&](const char* what) {
    d.notes.push_back(fmt::format("{}: unreadable {}", name, what));
  };
  if (auto v = sysfs.read(base + "/node_guid"))
    d.node_guid = *v;
  else
    note_missing("node_guid");
  if (auto v = sysfs.read(base + "/sys_image_guid"))
    d.sys_image_guid = *v;
  else
    note_missing("sys_image_guid");
  if (auto v = sysfs.read(base + "/fw_ver")) d.fw_ver = *v;
  if (auto v = sysfs.read(base + "/board_id")) d.board_id = *v;
  if (auto v = sysfs.read(base + "/hca_type")) d.hca_type = *v;
  if (auto pci = sysfs.resolve(base + "/device")) {
    d.pci_path = *pci;
    if (auto v = sysfs.read(base + "/device/vendor")) d.vendor = *v;
    if (auto v = sysfs.read(base + "/device/device")) d.vendor_part = *v;
    d.pcie = read_pcie_link(sysfs, base + "/device");
  } else {
    d.pci_path = "virtual";
    d.is_virtual = true;
  }
  for (const auto& pname : sysfs.list(base + "/ports")) {
    auto num = port_number(pname);
    if (!num) {
      d.notes.push_back(fmt::format("{}: ignored odd port entry '{}'", name, pname));
      continue;
    }
    Port p;
    p.number = *num;
    const std::string pb = base + "/ports/" + pname;
    if (auto s = sysfs.read_int(pb + "/state"); s && *s >= 0 && *s <= 5) p.state = static_cast<PortState>(*s);
    if (auto s = sysfs.read_int(pb + "/phys_state"); s && *s >= 1 && *s <= 7)
      p.phys_state = static_cast<int>(*s);
    p.link_layer = parse_link_layer(sysfs.read(pb + "/link_layer"));
    if (auto r = sysfs.read(pb + "/rate")) {
      p.rate_text = *r;
      p.speed_mbps = mbps_from_rate_text(*r);
    }
    if (auto l = sysfs.read_int(pb + "/lid"); l && *l >= 0 && *l <= 0xffff) p.lid = static_cast<int>(*l);
    if (read_gids) {
      for (const auto& n : sysfs.list(pb + "/gids"))
        if (auto v = parse_leading_int(n); v && *v >= 0 && *v < 65536)
          p.gid_tbl_len = std::max(p.gid_tbl_len, static_cast<int>(*v) + 1);
      if (p.gid_tbl_len > 0)
        p.gids = read_gids_from_sysfs(sysfs, name, p.number, p.link_layer, p.gid_tbl_len);
    }
    fill_netdev(sysfs, name, p);
    d.ports.push_back(std::move(p));
  }
  return d;
}

Inventory discover_sysfs(const std::string& sysfs_root) {
  Inventory inv;
  const Sysfs sysfs(sysfs_root.empty() ? Sysfs::default_root() : sysfs_root);
  inv.sysfs_root = sysfs.root();
  for (const auto& name : sysfs.list("class/infiniband"))
    inv.devices.push_back(read_device_from_sysfs(sysfs, name, /*read_gids=*/true));
  return inv;
}

}  // namespace railscope::node
