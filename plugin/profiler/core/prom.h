// Prometheus textfile exposition for node_exporter's textfile collector (text format 0.0.4): one file per
// process in the directory RAILSCOPE_PROFILE_PROM, `railscope-<host>-<pid>.prom`, replaced atomically
// (written to a temporary name the collector ignores, then renamed). Series carry `host`, `rank` and
// `comm` labels so ranks never overwrite each other; names and units follow Prometheus' naming rules
// (https://prometheus.io/docs/practices/naming/): base units (seconds, bytes per second), `_total` for
// counters. Every metric is described in docs/profiler.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/profiler/core/op_stats.h"

namespace railscope::profiler {

// What one communicator contributes to the textfile (kept by the monitor thread).
struct PromCommSeries {
  std::string comm;  // "0x…" (comm_hex)
  int rank = -1;
  StatsTable stats;                           // completed records with a time and a busbw
  std::map<Op, uint64_t> records;             // every coll/p2p record written, by op
  std::map<std::string, uint64_t> diagnoses;  // by catalogue id
  std::map<std::string, uint64_t> drops;      // by kind (kDropNames)
};

struct PromProcess {
  std::string host;
  int pid = 0;
  double unix_seconds = 0.0;  // time of this write
};

// A label value as the text format wants it: valid UTF-8 (ill-formed bytes become U+FFFD), `\`, `"` and
// line feed escaped, other control characters replaced by a space.
std::string prom_label_value(std::string_view s);

// Series with the same (comm, rank) are summed into one (ABI v1..v3 give every communicator the hash 0;
// the text format allows each label set once).
std::string format_prometheus(const PromProcess& process, const std::vector<const PromCommSeries*>& comms);

// `<dir>/railscope-<host>-<pid>.prom` (host reduced to [A-Za-z0-9._-]).
std::string prom_file_path(const std::string& dir, const std::string& host, int pid);

}  // namespace railscope::profiler
