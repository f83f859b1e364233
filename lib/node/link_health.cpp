// SPDX-License-Identifier: Apache-2.0
// Link health: trained rate against capability and siblings, rails down, link errors (link_health.h).
#include "railscope/node/link_health.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

#include "railscope/node/ethtool_stats.h"
#include "railscope/node/sysfs.h"

namespace railscope::node {
namespace {

// The link counters worth a look since boot: the InfiniBand PortCounters (counters/; mlx5 publishes them
// for RoCE ports too), rxe's hw_counters/link_downed, and mlx5's physical-port ethtool counters. Only
// these files are read.
constexpr std::array<std::string_view, 7> kIbLinkCounters = {"link_downed",
                                                             "link_error_recovery",
                                                             "symbol_error",
                                                             "port_rcv_errors",
                                                             "local_link_integrity_errors",
                                                             "excessive_buffer_overrun_errors",
                                                             "port_rcv_remote_physical_errors"};

// Counters that say the link went down (or into recovery), as opposed to bit errors on a link that stayed up.
bool is_link_down_counter(std::string_view name) {
  return name == "link_downed" || name == "link_error_recovery" || name == "link_down_events_phy";
}

std::string gbps(int64_t mbps) {
  if (mbps % 1000 == 0) return fmt::format("{} Gb/s", mbps / 1000);
  return fmt::format("{:.1f} Gb/s", static_cast<double>(mbps) / 1000.0);
}

std::string shape(const PortLink& p) {
  if (p.width > 0 && !p.lane.empty()) return fmt::format("{} ({}X {})", gbps(p.speed_mbps), p.width, p.lane);
  if (p.width > 0) return fmt::format("{} ({}X)", gbps(p.speed_mbps), p.width);
  return gbps(p.speed_mbps);
}

std::string list_counters(const std::vector<std::pair<std::string, uint64_t>>& counters) {
  std::string out;
  for (const auto& [name, value] : counters)
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, value);
  return out;
}

PortCounters read_link_counters(const Sysfs& sysfs, EthtoolSource* ethtool, const std::string& device,
                                const Port& p) {
  PortCounters pc;
  pc.device = device;
  pc.port = p.number;
  const std::string base = fmt::format("class/infiniband/{}/ports/{}", device, p.number);
  for (const bool hw : {false, true})
    for (const auto name : kIbLinkCounters) {
      if (hw && name != "link_downed") continue;
      const auto text = sysfs.read(fmt::format("{}/{}/{}", base, hw ? "hw_counters" : "counters", name));
      if (!text) continue;
      if (const auto v = parse_counter_value(*text))
        pc.counters.push_back(Counter{std::string(name), counter_category(name), *v, hw,
                                      hw ? CounterSource::Hw : CounterSource::Port});
    }
  if (ethtool != nullptr && p.link_layer != LinkLayer::InfiniBand && valid_ifname(p.netdev)) {
    pc.netdev = p.netdev;
    auto eth = read_ethtool_counters(*ethtool, p.netdev);
    pc.ethtool_available = !eth.empty();
    for (auto& c : eth)
      if (c.category == CounterCategory::Link) pc.counters.push_back(std::move(c));
  }
  return pc;
}

}  // namespace

RateText parse_rate_text(std::string_view text) {
  RateText r;
  r.mbps = mbps_from_rate_text(text);
  const size_t open = text.find('(');
  if (open == std::string_view::npos) return r;
  std::string_view inner = text.substr(open + 1);
  int width = 0;
  size_t i = 0;
  while (i < inner.size() && i < 3 && inner[i] >= '0' && inner[i] <= '9')
    width = width * 10 + (inner[i++] - '0');
  if (i == 0 || i >= inner.size() || inner[i] != 'X') return r;
  r.width = width;
  inner.remove_prefix(i + 1);
  while (!inner.empty() && inner.front() == ' ') inner.remove_prefix(1);
  const size_t end = inner.find(')');
  if (end != std::string_view::npos && end <= 8) r.lane = std::string(inner.substr(0, end));
  return r;
}

std::string_view lane_name(int lane_mbps) {
  switch (lane_mbps) {
    case 2500: return "SDR";
    case 5000: return "DDR";
    case 10000: return "QDR";
    case 14000: return "FDR";
    case 25000: return "EDR";
    case 50000: return "HDR";
    case 100000: return "NDR";
    case 200000: return "XDR";
    default: return "";
  }
}

std::vector<std::pair<std::string, uint64_t>> nonzero_link_counters(const PortCounters& counters) {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (const auto& c : counters.counters)
    if (c.category == CounterCategory::Link && c.value > 0) out.emplace_back(c.name, c.value);
  return out;
}

LinkHealth check_link_health(const Inventory& inventory, const Sysfs& sysfs, EthtoolSource* ethtool,
                             const PortFilter& selected) {
  LinkHealth h;
  for (const auto& d : inventory.devices)
    for (const auto& p : d.ports) {
      PortLink l;
      l.device = d.name;
      l.port = p.number;
      l.link_layer = p.link_layer;
      l.state = p.state;
      l.phys_state = p.phys_state;
      l.model = d.vendor_part;
      l.selected = !selected || selected(d, p);
      const RateText rate = parse_rate_text(p.rate_text);
      l.width = p.width > 0 ? p.width : rate.width;
      l.lane = p.lane_mbps > 0 ? std::string(lane_name(p.lane_mbps)) : rate.lane;
      l.speed_mbps = p.speed_mbps > 0 ? p.speed_mbps : rate.mbps;
      if (ethtool != nullptr && p.link_layer == LinkLayer::Ethernet && valid_ifname(p.netdev))
        if (const auto ls = ethtool->link_settings(p.netdev)) {
          l.capable_mbps = ls->max_supported_mbps;
          if (l.speed_mbps == 0) l.speed_mbps = ls->speed_mbps;
        }
      l.errors_since_boot = nonzero_link_counters(read_link_counters(sysfs, ethtool, d.name, p));
      h.ports.push_back(std::move(l));
    }

  for (auto& l : h.ports) {
    for (const auto& o : h.ports) {
      if (&o == &l || o.link_layer != l.link_layer || o.model != l.model) continue;
      ++l.siblings;
      if (o.state != PortState::Active) continue;
      ++l.siblings_active;
      l.siblings_mbps = std::max(l.siblings_mbps, o.speed_mbps);
    }
    const std::string where = fmt::format("{}:{}", l.device, l.port);
    const std::string kind =
        fmt::format("{}{}", to_string(l.link_layer), l.model.empty() ? "" : ", device " + l.model);
    std::vector<diag::Finding> found;
    if (l.state != PortState::Active) {
      l.verdict = "down";
      if (l.siblings_active > 0) {
        l.verdict = "rail_down";
        found.push_back(
            diag::make("link.rail_down",
                       fmt::format("{} is {} (physical state {}) while {} of its {} sibling port(s) ({}) are "
                                   "ACTIVE: one rail of this node is missing",
                                   where, to_string(l.state), phys_state_name(l.phys_state),
                                   l.siblings_active, l.siblings, kind)));
      }
    } else if (l.speed_mbps == 0) {
      l.verdict = "unknown";
    } else if (l.siblings_mbps > l.speed_mbps) {
      l.verdict = "degraded";
      found.push_back(diag::make(
          "link.degraded", fmt::format("{} trained at {} while its fastest active sibling ({}) runs {}{}",
                                       where, shape(l), kind, gbps(l.siblings_mbps),
                                       l.capable_mbps > l.speed_mbps
                                           ? fmt::format("; the port supports {}", gbps(l.capable_mbps))
                                           : std::string())));
    } else if (l.capable_mbps > l.speed_mbps) {
      l.verdict = "below_capability";
      found.push_back(
          diag::make("link.below_capability",
                     fmt::format("{} trained at {}; its netdev supports {} (siblings at the same rate: "
                                 "{} of {})",
                                 where, shape(l), gbps(l.capable_mbps), l.siblings_active, l.siblings)));
    } else {
      l.verdict = "ok";
    }
    std::vector<std::pair<std::string, uint64_t>> downs;
    std::vector<std::pair<std::string, uint64_t>> errors;
    for (const auto& e : l.errors_since_boot) (is_link_down_counter(e.first) ? downs : errors).push_back(e);
    if (!downs.empty())
      found.push_back(diag::make(
          "link.downed_since_boot",
          fmt::format("{}: {} since the counters were last cleared", where, list_counters(downs))));
    if (!errors.empty())
      found.push_back(diag::make(
          "link.errors_since_boot",
          fmt::format("{}: {} since the counters were last cleared", where, list_counters(errors))));
    if (l.selected)
      for (auto& f : found) h.findings.push_back(std::move(f));
  }
  return h;
}

std::vector<diag::Finding> link_findings_between(const PortCounters& before, const PortCounters& after,
                                                 double seconds) {
  std::vector<std::pair<std::string, uint64_t>> downs;
  std::vector<std::pair<std::string, uint64_t>> errors;
  for (const auto& d : counter_deltas(before, after)) {
    if (d.category != CounterCategory::Link || d.delta == 0) continue;
    (is_link_down_counter(d.name) ? downs : errors).emplace_back(d.name, d.delta);
  }
  std::vector<diag::Finding> out;
  const std::string where = fmt::format("{}:{}", after.device, after.port);
  auto plus = [](const std::vector<std::pair<std::string, uint64_t>>& v) {
    std::string s;
    for (const auto& [name, delta] : v) s += fmt::format("{}{} +{}", s.empty() ? "" : ", ", name, delta);
    return s;
  };
  if (!downs.empty())
    out.push_back(diag::make(
        "link.flapping",
        fmt::format("{}: {} in {:.1f} s: the link went down and came back", where, plus(downs), seconds)));
  if (!errors.empty())
    out.push_back(
        diag::make("link.errors_rising", fmt::format("{}: {} in {:.1f} s", where, plus(errors), seconds)));
  return out;
}

}  // namespace railscope::node
