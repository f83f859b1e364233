// SPDX-License-Identifier: Apache-2.0
// `railscope doctor --watch SECONDS`: a snapshot of every selected port's counters (counters/,
// hw_counters/, the RoCE netdev's ethtool statistics), a pause, a second snapshot, and the deltas per port
// by category as a table or JSON, with findings when loss, discards, link errors or pause storms rose —
// the quick look during a slow job (docs/fabric-health.md, docs/doctor.md).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "railscope/core/diagnosis.h"
#include "railscope/node/port_counters.h"

namespace railscope::doctor {

struct WatchPort {
  node::PortCounters before;
  node::PortCounters after;
};

struct WatchPortResult {
  std::string device;
  int port = 0;
  std::string netdev;
  bool ethtool_available = false;
  std::vector<node::CounterDelta> deltas;  // every counter that changed, unknown ones included
};

struct WatchResult {
  double seconds = 0;
  std::vector<WatchPortResult> ports;
  std::vector<diag::Finding> findings;
  int exit_code = 0;  // as doctor's: 0 healthy (info at most), 1 warnings, 2 errors
};

// Deltas and findings from two snapshots of each port taken `seconds` apart (pure; unit-tested).
WatchResult evaluate_watch(const std::vector<WatchPort>& ports, double seconds);

nlohmann::json watch_json(const WatchResult& r, const std::string& sysfs_root);
std::string watch_text(const WatchResult& r, const std::string& sysfs_root);

struct WatchOptions {
  std::string sysfs_root;  // empty: RAILSCOPE_SYSFS_ROOT or /sys
  bool use_verbs = true;
  double seconds = 1;
};
// Discovers the node, opens a sampler per port NCCL_IB_HCA selects, samples, sleeps, samples.
WatchResult run_watch(const WatchOptions& options, std::string* sysfs_root_used);

}  // namespace railscope::doctor
