// SPDX-License-Identifier: Apache-2.0
// GID tables and the index railscope (like NCCL) would pick on each selected port, with reasons.
#include <fmt/format.h>

#include "doctor.h"

namespace railscope::doctor {

Section section_gids(const NodeFacts& facts) {
  Section s;
  s.name = "gids";
  const auto& pol = facts.gid_policy;
  s.json["policy"] = {{"forced_index", pol.forced_index},
                      {"roce_version", pol.roce_version},
                      {"addr_family", node::to_string(pol.family)},
                      {"addr_range", pol.range ? nlohmann::json(pol.range->text) : nlohmann::json(nullptr)}};
  s.text.push_back(fmt::format("policy: {}, RoCE v{}, {}{}",
                               pol.forced_index >= 0 ? fmt::format("NCCL_IB_GID_INDEX={}", pol.forced_index)
                                                     : std::string("automatic"),
                               pol.roce_version, node::to_string(pol.family),
                               pol.range ? ", range " + pol.range->text : std::string()));
  nlohmann::json ports = nlohmann::json::array();
  for (const auto& d : facts.inventory.devices) {
    for (const auto& p : d.ports) {
      if (!port_selected(facts, d, p)) continue;
      const std::string where = port_name(d, p);
      const node::GidChoice c = node::select_gid(p.link_layer, p.gid_tbl_len, p.gids, pol, where);
      nlohmann::json table = nlohmann::json::array();
      for (const auto& g : p.gids)
        table.push_back({{"index", g.index},
                         {"gid", g.gid.to_string()},
                         {"gid_raw", g.gid.to_sysfs_string()},
                         {"type", node::to_string(g.type)},
                         {"family", node::to_string(g.gid.family())},
                         {"ipv4", known(node::ipv4_text(g.gid))},
                         {"link_local", g.gid.is_link_local()},
                         {"netdev", known(g.netdev)}});
      nlohmann::json rejected = nlohmann::json::array();
      for (const auto& r : c.rejected) rejected.push_back({{"index", r.index}, {"reason", r.reason}});
      ports.push_back(
          {{"device", d.name},
           {"port", p.number},
           {"gid_tbl_len", p.gid_tbl_len},
           {"selected_index", c.index},
           {"selected_gid", c.entry ? nlohmann::json(c.entry->gid.to_string()) : nlohmann::json(nullptr)},
           {"forced", c.forced},
           {"reason", c.reason},
           {"rejected", rejected},
           {"table", table}});
      s.text.push_back(fmt::format("{}: index {}{} — {}", where, c.index,
                                   c.entry ? " " + c.entry->gid.to_string() : std::string(" (empty)"),
                                   c.reason));
      for (const auto& g : p.gids) {
        std::string why;
        for (const auto& r : c.rejected)
          if (r.index == g.index) why = "  ✗ " + r.reason;
        s.text.push_back(fmt::format(
            "  {} [{:>3}] {:<40} {:<8} {:<8}{}{}{}", g.index == c.index ? "→" : " ", g.index,
            g.gid.to_string(), node::to_string(g.type), node::to_string(g.gid.family()),
            g.gid.is_link_local() ? " link-local" : "", g.netdev.empty() ? "" : " " + g.netdev, why));
      }
      for (auto& f : c.findings) s.findings.push_back(std::move(f));
    }
  }
  if (ports.empty()) s.text.push_back("no selected port");
  s.json["ports"] = ports;
  return s;
}

}  // namespace railscope::doctor
