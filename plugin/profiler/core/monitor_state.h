// SPDX-License-Identifier: Apache-2.0
// What the monitor thread keeps per communicator (touched only under the monitor's lock).
#pragma once

#include <cstdint>

#include "plugin/profiler/core/op_stats.h"
#include "plugin/profiler/core/prom.h"
#include "plugin/profiler/core/slow_detector.h"

namespace railscope::profiler {

struct MonitorCommState {
  uint64_t colls_written = 0;
  uint64_t p2ps_written = 0;
  uint64_t incomplete = 0;
  uint64_t diagnoses = 0;
  PromCommSeries series;  // per (op, size) stats, records, diagnoses: summary table and textfile
  SlowDetector slow;
  bool expectation_set = false;       // apply_expectation (comm_expectation.h) has run
  uint32_t net_ports_generation = 0;  // NetPortsSeen::generation() it saw
};

}  // namespace railscope::profiler
