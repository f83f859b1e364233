// SPDX-License-Identifier: Apache-2.0
#include "plugin/profiler/core/fabric_sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>

#include "railscope/node/ethtool_stats.h"
#include "railscope/node/port_sampler.h"

namespace railscope::profiler {
namespace {

using node::CounterCategory;

std::string port_name(const std::string& device, int port) { return device + ":" + std::to_string(port); }

std::string gbit(int64_t mbps) { return fmt::format("{:g} Gb/s", static_cast<double>(mbps) / 1000.0); }

// The state text of a port as sysfs has it ("4: ACTIVE" → "ACTIVE"); "unknown" when unreadable.
std::string read_state(const node::Sysfs& sysfs, const std::string& device, int port) {
  const auto text = sysfs.read(fmt::format("class/infiniband/{}/ports/{}/state", device, port));
  if (!text) return "unknown";
  const size_t colon = text->find(':');
  std::string s = colon == std::string::npos ? *text : text->substr(colon + 1);
  s.erase(0, s.find_first_not_of(' '));
  return s.empty() ? "unknown" : s;
}

}  // namespace

void FabricSampler::start(const node::Inventory& inventory, const node::HcaFilter& hca,
                          const std::string& sysfs_root, uint64_t unix_ns) {
  sysfs_ = node::Sysfs(sysfs_root);
  ports_.clear();
  problems_.clear();
  // Link layers with an active selected port, and the fastest active speed of each: a rail down or
  // slower than its siblings is judged against the ports like it.
  std::map<node::LinkLayer, int64_t> fastest;
  for (const node::Device& d : inventory.devices)
    for (const node::Port& p : d.ports)
      if (p.active() && hca.selects(d.name, p.number))
        fastest[p.link_layer] = std::max(fastest[p.link_layer], p.speed_mbps);
  for (const node::Device& d : inventory.devices) {
    for (const node::Port& p : d.ports) {
      if (!hca.selects(d.name, p.number)) continue;
      const std::string name = port_name(d.name, p.number);
      const auto sibling = fastest.find(p.link_layer);
      if (!p.active()) {
        // NCCL_IB_HCA names the port, or it is like the ports in use: a rail the job runs without.
        if (!hca.unset() || sibling != fastest.end())
          problems_.push_back(
              {"fabric.rail_down", fmt::format("{} ({}) is {} (physical state {}) when the job starts{}",
                                               name, node::to_string(p.link_layer), node::to_string(p.state),
                                               node::phys_state_name(p.phys_state),
                                               hca.unset() ? " while its sibling ports are active"
                                                           : ", though NCCL_IB_HCA selects it")});
        continue;
      }
      if (p.speed_mbps > 0 && sibling->second > p.speed_mbps)
        problems_.push_back(
            {"fabric.rail_degraded",
             fmt::format("{} runs at {} ({}) while its fastest sibling runs at {}", name, gbit(p.speed_mbps),
                         p.rate_text.empty() ? "rate unknown" : p.rate_text, gbit(sibling->second))});
      Sampled s;
      s.device = d.name;
      s.port = p.number;
      s.speed_mbps = p.speed_mbps;
      s.link_layer = std::string(node::to_string(p.link_layer));
      if (p.link_layer == node::LinkLayer::Ethernet) s.netdev = p.netdev;
      ports_.push_back(std::move(s));
    }
  }
  std::vector<node::PortCounters> first = snapshot();
  for (size_t i = 0; i < ports_.size(); ++i) {
    ports_[i].current = std::move(first[i]);
    ports_[i].previous = ports_[i].current;
  }
  window_start_ns_ = previous_start_ns_ = unix_ns;
}

// Read as the net plugin's fabric watch reads (plugin/net/verbs/watch/fabric_watch.cpp): a PortSampler and an
// ethtool source per reading (the ioctl's socket, the counter files) closed before it returns. The ioctl
// on the real /sys, the fixture files under another root (ethtool_stats.h).
std::vector<node::PortCounters> FabricSampler::snapshot() const {
  std::vector<node::PortCounters> out;
  out.reserve(ports_.size());
  bool any_netdev = false;
  for (const Sampled& s : ports_) any_netdev = any_netdev || !s.netdev.empty();
  const std::unique_ptr<node::EthtoolSource> ethtool =
      any_netdev ? node::ethtool_source_for(sysfs_) : std::unique_ptr<node::EthtoolSource>();
  for (const Sampled& s : ports_)
    out.push_back(node::PortSampler(sysfs_, s.device, s.port, s.netdev, ethtool.get()).sample());
  return out;
}

FabricWindow FabricSampler::window_since(bool previous, uint64_t unix_ns,
                                         std::vector<node::PortCounters>* now) const {
  FabricWindow w;
  w.start_unix_ns = previous ? previous_start_ns_ : window_start_ns_;
  w.end_unix_ns = unix_ns;
  std::vector<node::PortCounters> snap = snapshot();
  for (size_t i = 0; i < ports_.size(); ++i) {
    const Sampled& s = ports_[i];
    node::PortCounters& after = snap[i];
    PortWindow pw;
    pw.device = s.device;
    pw.port = s.port;
    pw.state = read_state(sysfs_, s.device, s.port);
    pw.speed_mbps = s.speed_mbps;
    pw.link_layer = s.link_layer;
    pw.netdev = s.netdev;
    pw.deltas = node::counter_deltas(previous ? s.previous : s.current, after);
    for (const node::CounterDelta& d : pw.deltas) {
      pw.by_category[static_cast<size_t>(d.category)] += d.delta;
      pw.reset = pw.reset || d.reset;
    }
    w.ports.push_back(std::move(pw));
    if (now != nullptr) now->push_back(std::move(after));
  }
  return w;
}

FabricWindow FabricSampler::next_window(uint64_t unix_ns) {
  std::vector<node::PortCounters> now;
  FabricWindow w = window_since(false, unix_ns, &now);
  for (size_t i = 0; i < ports_.size(); ++i) {
    ports_[i].previous = std::move(ports_[i].current);
    ports_[i].current = std::move(now[i]);
  }
  previous_start_ns_ = window_start_ns_;
  window_start_ns_ = unix_ns;
  return w;
}

FabricWindow FabricSampler::recent(uint64_t unix_ns) const { return window_since(true, unix_ns, nullptr); }

std::string fabric_trouble(const FabricWindow& w) {
  struct Trouble {
    CounterCategory category;
    const char* what;
  };
  // The troubleshooting order (docs/fabric-health.md): link, loss, pause, congestion, discards.
  static constexpr Trouble kKinds[] = {{CounterCategory::Link, "link errors"},
                                       {CounterCategory::Loss, "packet loss"},
                                       {CounterCategory::Pause, "PFC pause"},
                                       {CounterCategory::Congestion, "congestion"},
                                       {CounterCategory::Discard, "discards"}};
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : "; ") + part; };
  for (const PortWindow& p : w.ports) {
    if (p.state != "ACTIVE") add(fmt::format("{} is {}", p.name(), p.state));
    for (const Trouble& k : kKinds) {
      const uint64_t total = p.total(k.category);
      if (total == 0) continue;
      std::string names;
      int shown = 0;
      for (const node::CounterDelta& d : p.deltas) {
        if (d.category != k.category || d.delta == 0) continue;
        if (shown++ == 3) {
          names += ", …";
          break;
        }
        names += fmt::format("{}{} +{}", names.empty() ? "" : ", ", d.name, d.delta);
      }
      add(fmt::format("{} on {}: {} ({})", k.what, p.name(), total, names));
    }
  }
  return out;
}

}  // namespace railscope::profiler
