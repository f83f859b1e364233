// SPDX-License-Identifier: Apache-2.0
// `railscope doctor --watch` (watch.h).
#include "watch.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <thread>

#include "doctor.h"
#include "railscope/core/params.h"
#include "railscope/node/ethtool_stats.h"
#include "railscope/node/fabric_findings.h"
#include "railscope/node/link_health.h"
#include "railscope/node/port_sampler.h"
#include "railscope/node/sysfs.h"

namespace railscope::doctor {
namespace {

using node::CounterCategory;

constexpr std::array kColumns = {CounterCategory::Loss, CounterCategory::Congestion, CounterCategory::Pause,
                                 CounterCategory::Link, CounterCategory::Discard,    CounterCategory::Traffic,
                                 CounterCategory::Other};

int exit_code_for(diag::Severity s) {
  return s == diag::Severity::Error ? 2 : s == diag::Severity::Warning ? 1 : 0;
}

// "rcvd_seq_err +380, out_of_seq_request +32" for the deltas of one category, largest first (at most 6).
std::string figures(const std::vector<node::CounterDelta>& deltas, CounterCategory c) {
  std::vector<const node::CounterDelta*> v;
  for (const auto& d : deltas)
    if (d.category == c && d.delta > 0) v.push_back(&d);
  std::stable_sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->delta > b->delta; });
  std::string s;
  for (size_t i = 0; i < v.size() && i < 6; ++i)
    s += fmt::format("{}{} +{}", i ? ", " : "", v[i]->name, v[i]->delta);
  if (v.size() > 6) s += fmt::format(", … ({} more)", v.size() - 6);
  return s;
}

bool pause_storm(const std::vector<node::CounterDelta>& deltas) {
  return std::any_of(deltas.begin(), deltas.end(),
                     [](const auto& d) { return d.name.starts_with("tx_pause_storm_") && d.delta > 0; });
}

void set_exit_code(WatchResult* r) {
  r->exit_code = 0;
  for (const auto& f : r->findings) r->exit_code = std::max(r->exit_code, exit_code_for(f.severity));
}

}  // namespace

WatchResult evaluate_watch(const std::vector<WatchPort>& ports, double seconds) {
  WatchResult r;
  r.seconds = seconds;
  for (const auto& wp : ports) {
    WatchPortResult p;
    p.device = wp.after.device;
    p.port = wp.after.port;
    p.netdev = wp.after.netdev;
    p.ethtool_available = wp.after.ethtool_available;
    p.deltas = node::counter_deltas(wp.before, wp.after);
    const std::string where = fmt::format("{}:{}", p.device, p.port);
    for (auto& f : node::link_findings_between(wp.before, wp.after, seconds))
      r.findings.push_back(std::move(f));
    // Loss, congestion, pause and discards are judged as the net plugin judges a window in a running
    // job (node::fabric_findings: thresholds that keep a healthy run silent; the fix that fits the link
    // layer: a RoCE port has a netdev, an InfiniBand port none). The deltas are shown whatever they say.
    node::FabricWindow window{
        where, p.netdev.empty() ? node::LinkLayer::InfiniBand : node::LinkLayer::Ethernet, seconds, p.deltas};
    // The job's QPs time out as NCCL_IB_TIMEOUT says (the same variable in doctor's environment).
    window.ack_timeout_s = node::ack_timeout_seconds(static_cast<int>(params::get_int("NCCL_IB_TIMEOUT")));
    for (auto& f : node::fabric_findings(window))
      if (f.id() != "fabric.link_errors")  // link counters: link_findings_between above
        r.findings.push_back(std::move(f));
    if (pause_storm(p.deltas))
      r.findings.push_back(diag::make(
          "counters.pause_storm",
          fmt::format("{}: {} in {:.1f} s", where, figures(p.deltas, CounterCategory::Pause), seconds)));
    r.ports.push_back(std::move(p));
  }
  set_exit_code(&r);
  return r;
}

nlohmann::json watch_json(const WatchResult& r, const std::string& sysfs_root) {
  nlohmann::json ports = nlohmann::json::array();
  for (const auto& p : r.ports) {
    nlohmann::json totals = nlohmann::json::object();
    for (const auto c : kColumns) totals[std::string(node::to_string(c))] = node::category_total(p.deltas, c);
    nlohmann::json counters = nlohmann::json::array();
    for (const auto& d : p.deltas)
      counters.push_back({{"name", d.name},
                          {"source", node::to_string(d.source)},
                          {"category", node::to_string(d.category)},
                          {"delta", d.delta},
                          {"value", d.value},
                          {"reset", d.reset}});
    ports.push_back({{"device", p.device},
                     {"port", p.port},
                     {"netdev", known(p.netdev)},
                     {"ethtool_available", p.ethtool_available},
                     {"totals", totals},
                     {"counters", counters}});
  }
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings) findings.push_back(finding_json(f, "watch"));
  return {{"schema", "railscope.doctor.watch/1"},
          {"sysfs_root", sysfs_root},
          {"interval_s", r.seconds},
          {"ports", ports},
          {"findings", findings},
          {"status", r.exit_code == 2   ? "error"
                     : r.exit_code == 1 ? "warning"
                                        : "ok"},
          {"exit_code", r.exit_code}};
}

std::string watch_text(const WatchResult& r, const std::string& sysfs_root) {
  std::string out = fmt::format("railscope doctor --watch — sysfs {}, counter deltas over {:.1f} s\n\n",
                                sysfs_root, r.seconds);
  out += fmt::format("  {:<14} {:<12}", "port", "netdev");
  for (const auto c : kColumns) out += fmt::format(" {:>12}", node::to_string(c));
  out += "\n";
  for (const auto& p : r.ports) {
    const std::string nd = p.netdev.empty() ? "-" : p.netdev + (p.ethtool_available ? "" : " (no ethtool)");
    out += fmt::format("  {:<14} {:<12}", fmt::format("{}:{}", p.device, p.port), nd);
    for (const auto c : kColumns) out += fmt::format(" {:>12}", node::category_total(p.deltas, c));
    out += "\n";
    for (const auto& d : p.deltas) {
      if (d.category == CounterCategory::Traffic) continue;  // the totals say enough
      out += fmt::format("      {:<40} {:>14} {:<10} ({}){}\n", d.name, fmt::format("+{}", d.delta),
                         node::to_string(d.category), node::to_string(d.source), d.reset ? " reset" : "");
    }
  }
  if (r.ports.empty()) out += "  no RDMA port selected\n";
  out += fmt::format("\nFindings ({})\n", r.findings.size());
  for (const auto& f : r.findings)
    out += fmt::format("  {:<7} {}\n", diag::to_string(f.severity), diag::one_line(f));
  out += fmt::format("\nStatus: {} (exit {})\n",
                     r.exit_code == 2   ? "error"
                     : r.exit_code == 1 ? "warning"
                                        : "ok",
                     r.exit_code);
  return out;
}

WatchResult run_watch(const WatchOptions& options, std::string* sysfs_root_used) {
  const NodeFacts facts = [&] {
    NodeFacts f;
    f.inventory = node::discover({options.sysfs_root, options.use_verbs});
    f.hca = node::parse_hca_filter(params::get_string("NCCL_IB_HCA"));
    return f;
  }();
  *sysfs_root_used = facts.inventory.sysfs_root;
  const node::Sysfs sysfs(facts.inventory.sysfs_root);
  const auto ethtool = node::ethtool_source_for(sysfs);
  std::vector<node::PortSampler> samplers;
  for (const auto& d : facts.inventory.devices)
    for (const auto& p : d.ports)
      if (port_selected(facts, d, p))
        samplers.emplace_back(sysfs, d.name, p.number,
                              p.link_layer == node::LinkLayer::InfiniBand ? std::string() : p.netdev,
                              ethtool.get());
  std::vector<WatchPort> snaps(samplers.size());
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < samplers.size(); ++i) snaps[i].before = samplers[i].sample();
  std::this_thread::sleep_for(std::chrono::duration<double>(options.seconds));
  for (size_t i = 0; i < samplers.size(); ++i) snaps[i].after = samplers[i].sample();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WatchResult r = evaluate_watch(snaps, took);
  // Why there is nothing (useful) to watch is doctor's devices section's to say: no RDMA device,
  // NCCL_IB_HCA selecting none, no selected port ACTIVE. The same findings give the same exit status as
  // `railscope doctor`, never "ok" on a node doctor fails.
  const auto node = section_devices(facts).findings;
  r.findings.insert(r.findings.begin(), node.begin(), node.end());
  set_exit_code(&r);
  return r;
}

}  // namespace railscope::doctor
