// SPDX-License-Identifier: Apache-2.0
// Environment hygiene: NCCL tuning overrides, and bad NCCL_IB_* values met while reading the policy.
#include <fmt/format.h>

#include "doctor.h"

namespace railscope::doctor {

Section section_env(const NodeFacts& facts) {
  Section s;
  s.name = "env";
  bool has_roce = false;
  for (const auto& d : facts.inventory.devices)
    for (const auto& p : d.ports) {
      if (!port_selected(facts, d, p)) continue;
      has_roce |= p.link_layer == node::LinkLayer::Ethernet;
    }
  nlohmann::json set = nlohmann::json::array();
  for (const auto& v : node::tuning_variables())
    if (auto value = facts.env ? facts.env(v.name) : std::nullopt)
      set.push_back({{"name", v.name}, {"value", *value}});
  // The gids section already reports NCCL_IB_GID_INDEX on each InfiniBand port (gid.forced_on_ib).
  s.findings = facts.env ? node::check_env_hygiene(facts.env, has_roce, /*has_ib=*/false)
                         : std::vector<diag::Finding>{};
  for (const auto& f : facts.config_problems) s.findings.push_back(f);
  s.json = {{"tuning_overrides", set}};
  s.text.push_back(set.empty() ? "no NCCL tuning overrides set"
                               : fmt::format("{} NCCL tuning override(s) set", set.size()));
  return s;
}

}  // namespace railscope::doctor
