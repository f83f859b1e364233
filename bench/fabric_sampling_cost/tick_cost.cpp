// SPDX-License-Identifier: Apache-2.0
// bench/fabric_sampling_cost/tick_cost: what one tick of the net plugin's fabric watch costs the CPU
// (plugin/net/verbs/watch/fabric_watch.cpp: once a second, per port in use, a fresh node::PortSampler opens
// the port's counter files, reads them once and closes them, then the deltas are judged). This program does
// exactly that per named port, TICKS times back to back, and prints the thread CPU time and wall time
// per port-tick: the sampler's share of one core is that time per second. Not a test: run in the
// soft-RoCE guest by guest.sh (real rxe sysfs), or on any host with RDMA ports.
// usage: tick_cost [--ticks N] DEV:PORT[:NETDEV]...
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "railscope/node/ethtool_stats.h"
#include "railscope/node/fabric_findings.h"
#include "railscope/node/port_counters.h"
#include "railscope/node/port_sampler.h"
#include "railscope/node/sysfs.h"

namespace {

namespace node = railscope::node;

struct PortArg {
  std::string device, netdev;
  int port = 1;
};

double now_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

bool parse_port(std::string_view text, PortArg* out) {
  const auto c1 = text.find(':');
  if (c1 == std::string_view::npos || c1 == 0) return false;
  out->device = std::string(text.substr(0, c1));
  auto rest = text.substr(c1 + 1);
  const auto c2 = rest.find(':');
  const auto port_text = rest.substr(0, c2);
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), out->port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || out->port < 1) return false;
  if (c2 != std::string_view::npos) out->netdev = std::string(rest.substr(c2 + 1));
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int ticks = 200;
  std::vector<PortArg> ports;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--ticks" && i + 1 < argc) {
      ticks = std::max(1, std::atoi(argv[++i]));
    } else if (PortArg p; parse_port(a, &p)) {
      ports.push_back(std::move(p));
    } else {
      std::fprintf(stderr, "usage: tick_cost [--ticks N] DEV:PORT[:NETDEV]...  (bad argument '%s')\n",
                   argv[i]);
      return 2;
    }
  }
  if (ports.empty()) {
    std::fprintf(stderr, "usage: tick_cost [--ticks N] DEV:PORT[:NETDEV]...\n");
    return 2;
  }
  const node::Sysfs sysfs(node::Sysfs::default_root());
  const std::unique_ptr<node::EthtoolSource> ethtool = node::ethtool_source_for(sysfs);
  std::printf("%-10s %6s %8s %14s %14s %10s %18s\n", "port", "files", "ticks", "cpu_us/tick", "wall_us/tick",
              "core_share", "cpu_us/kept_sample");
  for (const auto& p : ports) {
    std::vector<double> cpu, wall;
    node::PortCounters previous;
    size_t files = 0;
    size_t findings = 0;
    for (int t = 0; t < ticks; ++t) {
      const double c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
      // What one tick of FabricWatch::run does for one port: a sampler for the tick, one sample, the
      // tick's deltas and the window's judgement.
      node::PortSampler sampler(sysfs, p.device, p.port, p.netdev, ethtool.get());
      node::PortCounters cur = sampler.sample();
      node::FabricWindow w{p.device + ":" + std::to_string(p.port), node::LinkLayer::Ethernet, 1.0,
                           node::counter_deltas(previous, cur)};
      findings += node::fabric_findings(w).size();
      previous = std::move(cur);
      files = sampler.files();
      cpu.push_back(now_ns(CLOCK_THREAD_CPUTIME_ID) - c0);
      wall.push_back(now_ns(CLOCK_MONOTONIC) - w0);
    }
    // For comparison: one sample of a sampler kept across ticks (its files opened once; the fabric watch
    // does not keep them, so that a process without connections holds no descriptor of ours).
    std::vector<double> kept_cpu;
    node::PortSampler kept(sysfs, p.device, p.port, p.netdev, ethtool.get());
    for (int t = 0; t < ticks; ++t) {
      const double c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
      findings += kept.sample().counters.size() > 0 ? 0 : 1;
      kept_cpu.push_back(now_ns(CLOCK_THREAD_CPUTIME_ID) - c0);
    }
    const double cpu_us = median(cpu) / 1e3;
    // Share of one core at one tick per second.
    std::printf("%-10s %6zu %8d %14.1f %14.1f %9.4f%% %18.1f\n",
                (p.device + ":" + std::to_string(p.port)).c_str(), files, ticks, cpu_us, median(wall) / 1e3,
                cpu_us / 1e6 * 100, median(kept_cpu) / 1e3);
    if (files == 0) std::fprintf(stderr, "tick_cost: %s:%d has no counter files\n", p.device.c_str(), p.port);
    (void)findings;
  }
  return 0;
}
