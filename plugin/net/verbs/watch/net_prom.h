// SPDX-License-Identifier: Apache-2.0
// The verbs engine's Prometheus textfile (RAILSCOPE_NET_PROM, docs/monitoring.md): the series of every
// port the engine's connections use (railscope/node/port_prom.h, names railscope_net_port_*), each
// port's large-send rail rate (rail_rate.h), and a timestamp, for node_exporter's textfile collector.
// Fed and written by the fabric sampler's thread (fabric_watch.h) after each tick, never on the data
// path; written atomically with mode 0644 (railscope/core/prom_textfile.h) and removed when the engine
// finalizes unless RAILSCOPE_NET_PROM_KEEP=1. Memory is bounded by the engine's ports.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "plugin/net/verbs/watch/rail_rate.h"
#include "railscope/core/prom_textfile.h"
#include "railscope/node/port_prom.h"

namespace railscope::node {
class Sysfs;
}

namespace railscope::net::verbs {

struct NetPort;

class NetPromFile {
 public:
  // From RAILSCOPE_NET_PROM and RAILSCOPE_NET_PROM_KEEP: null when unset, or when the setting names no
  // usable path (said once at WARN; the engine carries on). `ports` outlive this object.
  static std::unique_ptr<NetPromFile> from_env(const std::vector<NetPort>& ports);
  NetPromFile(std::string path, bool keep, core::PromIdentity id, const std::vector<NetPort>& ports);
  ~NetPromFile();  // removes the file unless kept
  NetPromFile(const NetPromFile&) = delete;
  NetPromFile& operator=(const NetPromFile&) = delete;

  // One tick of ports[i]: its counter deltas since the last tick, its state read from `sysfs`, its
  // large-send totals (cumulative).
  void add(size_t i, const std::vector<node::CounterDelta>& tick, const node::Sysfs& sysfs,
           const RailRateAccumulator::Totals& rail);
  // Replaces the file with the series so far (a failure is said once until a write succeeds).
  void write();
  const std::string& path() const { return path_; }

  // A rail's rate is taken over windows of this length (as the sampler's rate window).
  static constexpr std::chrono::seconds kRateWindow{10};

 private:
  struct Rail {
    bool seen = false;  // ticked at least once
    RailRateAccumulator::Totals total;
    RailRateAccumulator::Totals window_start;
    std::chrono::steady_clock::time_point window_at{};
    double rate = -1;  // bytes per second of the last window with large sends; -1 = none yet
  };
  std::string format() const;

  std::string path_;
  bool keep_ = false;
  core::PromIdentity id_;
  const std::vector<NetPort>& ports_;
  std::vector<node::PromPortSeries> series_;
  std::vector<Rail> rails_;
  bool failed_ = false;
};

}  // namespace railscope::net::verbs
