// SPDX-License-Identifier: Apache-2.0
// Link: each port's trained speed and width against its capability (RoCE: the netdev's link modes) and
// against its siblings, rails down while their siblings run, and link counters not zero since boot
// (lib/node/link_health.cpp reads and judges; this renders). docs/fabric-health.md, step 1.
#include <fmt/format.h>

#include "doctor.h"

namespace railscope::doctor {
namespace {

std::string gbps(int64_t mbps) {
  if (mbps == 0) return "unknown";
  if (mbps % 1000 == 0) return fmt::format("{} Gb/s", mbps / 1000);
  return fmt::format("{:.1f} Gb/s", static_cast<double>(mbps) / 1000.0);
}

std::string shape(const node::PortLink& p) {
  std::string s = gbps(p.speed_mbps);
  // InfiniBand's rate names ("4X NDR") mean nothing on an Ethernet port: its speed alone, in Gb/s.
  if (p.width > 0 && p.link_layer != node::LinkLayer::Ethernet)
    s += fmt::format(" ({}X{}{})", p.width, p.lane.empty() ? "" : " ", p.lane);
  return s;
}

}  // namespace

Section section_link(const NodeFacts& facts) {
  Section s;
  s.name = "link";
  nlohmann::json ports = nlohmann::json::array();
  for (const auto& p : facts.link.ports) {
    nlohmann::json errors = nlohmann::json::object();
    for (const auto& [name, value] : p.errors_since_boot) errors[name] = value;
    ports.push_back({{"device", p.device},
                     {"port", p.port},
                     {"selected", p.selected},
                     {"link_layer", node::to_string(p.link_layer)},
                     {"state", node::to_string(p.state)},
                     {"model", known(p.model)},
                     {"speed_mbps", known(p.speed_mbps)},
                     {"width", known(p.width)},
                     {"lane", known(p.lane)},
                     {"capable_mbps", known(p.capable_mbps)},
                     {"capability_from", p.capable_mbps > 0 ? nlohmann::json("ethtool link modes") : nullptr},
                     {"siblings", p.siblings},
                     {"siblings_active", p.siblings_active},
                     {"siblings_max_mbps", known(p.siblings_mbps)},
                     {"link_errors_since_boot", errors},
                     {"verdict", p.verdict}});
    std::string line = fmt::format("{}:{} {} {}: {}", p.device, p.port, node::to_string(p.link_layer),
                                   node::to_string(p.state), shape(p));
    if (p.capable_mbps > 0) line += fmt::format(", supports {}", gbps(p.capable_mbps));
    if (p.siblings > 0)
      line += fmt::format(", {} of {} sibling(s) active, fastest {}", p.siblings_active, p.siblings,
                          gbps(p.siblings_mbps));
    else
      line += ", no sibling of its kind";
    line += " → " + p.verdict;
    if (!p.selected) line += " (not selected by NCCL_IB_HCA)";
    s.text.push_back(line);
    if (!p.errors_since_boot.empty()) {
      std::string e;
      for (const auto& [name, value] : p.errors_since_boot)
        e += fmt::format("{}{} {}", e.empty() ? "" : ", ", name, value);
      s.text.push_back("    link counters since boot: " + e);
    }
  }
  if (ports.empty()) s.text.push_back("no RDMA port");
  s.findings = facts.link.findings;
  s.json = {{"ports", ports}};
  return s;
}

}  // namespace railscope::doctor
