// SPDX-License-Identifier: Apache-2.0
// One RDMA port's series in a Prometheus textfile (text format 0.0.4): counter increases by category
// (loss, congestion, pause, link, discard), bytes sent and received, link state, state changes and link
// rate, labelled `device`, `port`, `netdev` beside the writer's identity labels
// (railscope/core/prom_textfile.h). The profiler, the net plugin and `railscope doctor --watch` write
// the same families under their own name prefix (railscope_port_, railscope_net_port_,
// railscope_doctor_port_), so their files can share one collector folder without two files claiming a
// series (docs/monitoring.md lists them).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "railscope/node/port_counters.h"

namespace railscope::node {

inline constexpr size_t kCounterCategoryCount = 7;  // CounterCategory Loss … Other

// A port's totals since its writer began sampling, and its state and rate as last read.
struct PromPortSeries {
  std::string device;
  int port = 0;
  std::string netdev;  // RoCE: the netdev; "" otherwise
  std::string state;   // "ACTIVE", "DOWN", …
  int64_t speed_mbps = 0;
  std::array<uint64_t, kCounterCategoryCount> by_category{};  // indexed by CounterCategory
  uint64_t transmit_bytes = 0;                                // port_xmit_data × 4
  uint64_t receive_bytes = 0;                                 // port_rcv_data × 4
  uint64_t state_changes = 0;                                 // samples that found another state
};

using CategoryCounts = std::array<uint64_t, kCounterCategoryCount>;  // indexed by CounterCategory

// Adds one interval to the port's totals: its increases by category, the traffic counters among its
// deltas, and `state` and `speed_mbps` as read at its end (a state other than the last one read counts
// as a change).
void add_port_interval(PromPortSeries& p, const CategoryCounts& by_category,
                       const std::vector<CounterDelta>& deltas, const std::string& state, int64_t speed_mbps);
// The same, the categories summed from `deltas`.
void add_port_interval(PromPortSeries& p, const std::vector<CounterDelta>& deltas, const std::string& state,
                       int64_t speed_mbps);

// The port families for `ports`, each sample labelled `identity_labels` (`job=…,host=…,…`) and the
// port's own; metric names begin with `prefix` ("railscope_port"), the counter increases by category are
// `<prefix>_events_total` (promtool's linter refuses "counter" inside a name). Nothing when `ports` is
// empty.
void append_port_series(std::string& out, std::string_view prefix, const std::vector<PromPortSeries>& ports,
                        const std::string& identity_labels);

// The port's state as sysfs has it ("4: ACTIVE" → "ACTIVE"); "unknown" when unreadable.
class Sysfs;
std::string read_port_state(const Sysfs& sysfs, const std::string& device, int port);

}  // namespace railscope::node
