// SPDX-License-Identifier: Apache-2.0
// Prometheus textfile exposition for node_exporter's textfile collector (text format 0.0.4): one file per
// process (RAILSCOPE_PROFILE_PROM), replaced atomically. Every series carries the process's identity
// (`job`, `rank`, `local_rank`, `host`: railscope/core/prom_textfile.h); a communicator's series carry its
// shape (`comm_ranks`, `comm_nodes`), never its id, so the series a rank writes are bounded by the shapes
// of its communicators, the operations and three size classes; the id and name are in one info series per
// live communicator. Names and units follow Prometheus' naming rules
// (https://prometheus.io/docs/practices/naming/): base units, `_total` for counters. docs/monitoring.md
// describes every metric.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/profiler/core/fabric_sampler.h"
#include "plugin/profiler/core/op_stats.h"
#include "railscope/core/prom_textfile.h"
#include "railscope/node/port_prom.h"

namespace railscope::profiler {

// What one communicator contributes to the textfile (kept by the monitor thread).
struct PromCommSeries {
  std::string comm;  // "0x…" (comm_hex)
  std::string name;  // the communicator's name as the application gave it ("" when none)
  int rank = -1;     // in the communicator
  int nranks = 0;    // 0 = unknown (ABI v1..v3)
  int nnodes = 0;
  bool live = true;                           // false once finalized (kept for its last values)
  double wait_seconds = 0.0;                  // age of its oldest collective in flight; 0 = none
  StatsTable stats;                           // completed records with a time and a busbw
  std::map<Op, uint64_t> records;             // every coll/p2p record written, by op
  std::map<std::string, uint64_t> diagnoses;  // by catalogue id
  std::map<std::string, uint64_t> drops;      // by kind (kDropNames)
};

// One RDMA port as sampled since the process began (railscope/node/port_prom.h).
using PromPortSeries = node::PromPortSeries;

// Adds a fabric window to the ports' running totals (a port seen for the first time is added).
void add_window(std::vector<PromPortSeries>& ports, const FabricWindow& w);

struct PromProcess {
  core::PromIdentity id;  // job, rank, local rank, host
  int pid = 0;
  double unix_seconds = 0.0;  // time of this write
  std::vector<PromPortSeries> ports;
};

// The size classes of `size_class`: small below 64 KiB (latency-bound), medium below 16 MiB, large from
// 16 MiB (bandwidth-bound).
std::string_view size_class(int size_bucket);

// Series with the same labels (rank, communicator shape) are summed into one.
std::string format_prometheus(const PromProcess& process, const std::vector<const PromCommSeries*>& comms);

}  // namespace railscope::profiler
