// SPDX-License-Identifier: Apache-2.0
// Rail rates across nodes, after the fact (docs/fabric-health.md, step 3): from the net plugin's stats lines
// of several nodes (RAILSCOPE_NET_STATS, "rail_rate"), each host's ports' large sends over their busy time,
// and the rail (port of one name: NIC i on every node of a homogeneous cluster) that runs slower on one node
// than on the others — judged with node::slow_rail (railscope/node/rail_skew.h), the rule the plugin applies
// to the rails of one node while the job runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/report/profile_reader.h"

namespace railscope::report {

// One port of one host over the whole run.
struct RailRateRow {
  std::string host;
  std::string port;
  double bytes = 0;
  double busy_s = 0;
  uint64_t sends = 0;    // large sends (>= 64 KiB)
  size_t processes = 0;  // processes that sent on it
  double mb_per_s() const { return busy_s > 0 ? bytes / busy_s / 1e6 : 0.0; }
};

// The samples folded into one row per (host, port), sorted by port then host. A line carries the
// whole port's figures since that connection's previous line, so the lines of one connection add up
// to the port's over the connection's life; of the connections of one process on a port the one with
// the most bytes is taken (the others saw the same sends over a shorter life); the processes of one
// host on a port are added (busy time: the largest, their sends overlap on the link).
std::vector<RailRateRow> rail_rate_table(const std::vector<RailRateSample>& samples);

// fabric.rail_skew (warning) for each port name on at least two hosts whose slowest host runs below
// node::kRailSkewRatio of the median of the others (node::slow_rail; each with enough sends and busy
// time to judge): names the host and port, the rates and the fix.
std::vector<DiagRow> rail_skew_across_nodes(const std::vector<RailRateRow>& rows);

}  // namespace railscope::report
