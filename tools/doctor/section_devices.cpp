// SPDX-License-Identifier: Apache-2.0
// Devices and ports: what exists, what NCCL_IB_HCA selects, and which selected ports are down.
#include <fmt/format.h>

#include "doctor.h"

namespace railscope::doctor {
namespace {

nlohmann::json port_json(const NodeFacts& facts, const node::Device& d, const node::Port& p) {
  return {{"port", p.number},
          {"selected", port_selected(facts, d, p)},
          {"state", node::to_string(p.state)},
          {"phys_state", known(p.phys_state)},
          {"phys_state_name", node::phys_state_name(p.phys_state)},
          {"link_layer", node::to_string(p.link_layer)},
          {"active_mtu", known(p.active_mtu)},
          {"max_mtu", known(p.max_mtu)},
          {"width", known(p.width)},
          {"lane_mbps", known(p.lane_mbps)},
          {"speed_mbps", known(p.speed_mbps)},
          {"rate", known(p.rate_text)},
          {"lid", p.lid},
          {"gid_tbl_len", p.gid_tbl_len},
          {"netdev", known(p.netdev)},
          {"netdev_mtu", known(p.netdev_mtu)}};
}

std::string or_unknown(const std::string& s) { return s.empty() ? "unknown" : s; }
std::string or_unknown(int64_t v) { return v == 0 ? "unknown" : std::to_string(v); }

}  // namespace

Section section_devices(const NodeFacts& facts) {
  Section s;
  s.name = "devices";
  const auto& inv = facts.inventory;
  nlohmann::json devices = nlohmann::json::array();
  int selected = 0;
  int selected_active = 0;
  for (const auto& d : inv.devices) {
    nlohmann::json ports = nlohmann::json::array();
    s.text.push_back(fmt::format("{}  node_guid {}  sys_image_guid {}  fw {}  PCI {}{}", d.name,
                                 or_unknown(d.node_guid), or_unknown(d.sys_image_guid), or_unknown(d.fw_ver),
                                 d.pci_path, d.vendor.empty() ? "" : "  vendor " + d.vendor));
    if (!d.board_id.empty() || !d.hca_type.empty())
      s.text.push_back(fmt::format("  part {}  type {}", or_unknown(d.board_id), or_unknown(d.hca_type)));
    nlohmann::json pcie = nullptr;
    if (d.pcie) {
      const auto& l = *d.pcie;
      pcie = {
          {"width", known(l.width)},
          {"speed_gts", l.speed_gts > 0 ? nlohmann::json(l.speed_gts) : nlohmann::json(nullptr)},
          {"max_width", known(l.max_width)},
          {"max_speed_gts", l.max_speed_gts > 0 ? nlohmann::json(l.max_speed_gts) : nlohmann::json(nullptr)},
          {"reported_by", l.reported_by},
          {"degraded", l.narrower() || l.slower()}};
      s.text.push_back(
          fmt::format("  PCIe link {} (capable of {}){}", l.text(), l.max_text(),
                      l.reported_by == "device" ? "" : ", read at upstream port " + l.reported_by));
      if (l.narrower() || l.slower())
        s.findings.push_back(
            diag::make("pcie.link_degraded",
                       fmt::format("{} (PCI {}): PCIe link trained {}, capable of {}: {}", d.name, d.pci_path,
                                   l.text(), l.max_text(),
                                   l.narrower() && l.slower() ? "narrower and slower"
                                   : l.narrower() ? fmt::format("{} of {} lanes", l.width, l.max_width)
                                                  : "a lower PCIe generation")));
    }
    for (const auto& p : d.ports) {
      ports.push_back(port_json(facts, d, p));
      const bool sel = port_selected(facts, d, p);
      std::string line =
          fmt::format("  port {}: {} / {}, {}, speed {} Mb/s{}, active_mtu {} (max {})", p.number,
                      node::to_string(p.state), node::phys_state_name(p.phys_state),
                      p.link_layer == node::LinkLayer::Ethernet ? "Ethernet (RoCE)"
                                                                : std::string(node::to_string(p.link_layer)),
                      or_unknown(p.speed_mbps),
                      p.width && p.lane_mbps ? fmt::format(" ({}x {})", p.width, p.lane_mbps) : "",
                      or_unknown(p.active_mtu), or_unknown(p.max_mtu));
      if (p.link_layer != node::LinkLayer::InfiniBand)
        line += fmt::format(", netdev {} (MTU {})", or_unknown(p.netdev), or_unknown(p.netdev_mtu));
      if (!sel) line += "  [not selected by NCCL_IB_HCA]";
      s.text.push_back(line);
      if (!sel) continue;
      ++selected;
      if (p.active())
        ++selected_active;
      else
        s.findings.push_back(diag::make(
            "port.down", fmt::format("{} is {} (physical state {})", port_name(d, p),
                                     node::to_string(p.state), node::phys_state_name(p.phys_state))));
      if (p.link_layer == node::LinkLayer::Ethernet && p.netdev.empty())
        s.findings.push_back(diag::make("port.no_netdev", fmt::format("{} has no netdev", port_name(d, p))));
    }
    for (const auto& n : d.notes) s.text.push_back("  note: " + n);
    devices.push_back({{"name", d.name},
                       {"node_guid", known(d.node_guid)},
                       {"sys_image_guid", known(d.sys_image_guid)},
                       {"pci_path", d.pci_path},
                       {"virtual", d.is_virtual},
                       {"vendor", known(d.vendor)},
                       {"vendor_part", known(d.vendor_part)},
                       {"fw_ver", known(d.fw_ver)},
                       {"board_id", known(d.board_id)},
                       {"hca_type", known(d.hca_type)},
                       {"pcie", pcie},
                       {"max_qp", known(d.max_qp)},
                       {"notes", d.notes},
                       {"ports", ports}});
  }
  if (inv.devices.empty()) {
    std::string detail = "no RDMA device found";
    if (!inv.used_verbs)
      detail += fmt::format(" (sysfs {}/class/infiniband", inv.sysfs_root) +
                (inv.verbs_error.empty() ? ")" : "; " + inv.verbs_error + ")");
    s.text.push_back("No RDMA device found.");
    s.findings.push_back(diag::make("device.none", detail));
  } else if (!facts.hca.unset() && selected == 0) {
    s.findings.push_back(diag::make("device.filtered_out",
                                    fmt::format("NCCL_IB_HCA={} selects none of the {} device(s) present",
                                                facts.hca.text, inv.devices.size())));
  } else if (selected > 0 && selected_active == 0) {
    s.findings.push_back(
        diag::make("port.none_active", fmt::format("none of the {} selected port(s) is ACTIVE", selected)));
  }
  for (const auto& w : facts.hca.warnings)
    s.findings.push_back(diag::make("config.bad_env", fmt::format("NCCL_IB_HCA={}: {}", facts.hca.text, w)));
  s.json = {{"devices", devices},           {"count", inv.devices.size()},
            {"libibverbs", inv.used_verbs}, {"libibverbs_error", known(inv.verbs_error)},
            {"sysfs_root", inv.sysfs_root}, {"nccl_ib_hca", known(facts.hca.text)}};
  return s;
}

}  // namespace railscope::doctor
