// SPDX-License-Identifier: Apache-2.0
// MTU: each selected RoCE port's active_mtu against its netdev MTU, and local ports that disagree.
#include <fmt/format.h>

#include "doctor.h"
#include "railscope/node/mtu.h"

namespace railscope::doctor {

Section section_mtu(const NodeFacts& facts) {
  Section s;
  s.name = "mtu";
  nlohmann::json ports = nlohmann::json::array();
  std::vector<node::PortMtu> roce;
  for (const auto& d : facts.inventory.devices) {
    for (const auto& p : d.ports) {
      if (!port_selected(facts, d, p) || p.link_layer == node::LinkLayer::InfiniBand) continue;
      const std::string where = port_name(d, p);
      const int allowed = p.netdev_mtu > 0 ? node::roce_mtu_for_netdev(p.netdev_mtu) : 0;
      auto findings = node::check_port_mtu(where, p.active_mtu, p.netdev, p.netdev_mtu);
      std::string verdict = "ok";
      if (p.active_mtu == 0 || p.netdev_mtu == 0) verdict = "unknown";
      for (const auto& f : findings) verdict = std::string(f.id());
      ports.push_back({{"device", d.name},
                       {"port", p.number},
                       {"active_mtu", known(p.active_mtu)},
                       {"netdev", known(p.netdev)},
                       {"netdev_mtu", known(p.netdev_mtu)},
                       {"netdev_allows", known(allowed)},
                       {"verdict", verdict}});
      s.text.push_back(fmt::format("{}: active_mtu {}, netdev {} MTU {} allows {} → {}", where,
                                   p.active_mtu ? std::to_string(p.active_mtu) : "unknown",
                                   p.netdev.empty() ? "unknown" : p.netdev,
                                   p.netdev_mtu ? std::to_string(p.netdev_mtu) : "unknown",
                                   allowed ? std::to_string(allowed) : "unknown", verdict));
      for (auto& f : findings) s.findings.push_back(std::move(f));
      if (p.active()) roce.push_back({where, p.active_mtu});
    }
  }
  if (ports.empty()) s.text.push_back("no selected RoCE port");
  int lo = 0;
  int hi = 0;
  for (const auto& r : roce) {
    if (r.active_mtu <= 0) continue;
    lo = lo == 0 ? r.active_mtu : std::min(lo, r.active_mtu);
    hi = std::max(hi, r.active_mtu);
  }
  if (auto m = node::check_local_mtu_mismatch(roce)) {
    s.text.push_back(fmt::format("active RoCE ports disagree: a QP between them must use {}", lo));
    s.findings.push_back(std::move(*m));
  }
  s.json = {{"header_budget_bytes", node::kRoceHeaderBudget},
            {"ports", ports},
            {"min_active_mtu", known(lo)},
            {"max_active_mtu", known(hi)},
            {"mismatch", lo != hi}};
  return s;
}

}  // namespace railscope::doctor
