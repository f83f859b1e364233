// SPDX-License-Identifier: Apache-2.0
// The tuner's configuration file (RAILSCOPE_TUNER_CONFIG): pinning rules, measured figures and node
// facts, in railscope's `directive key=value ...` format, and NCCL's example-tuner CSV rules (one file
// may mix both). Parsing never throws: every problem becomes a ConfigError naming file, line, column.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/tuner/model/cost_model.h"
#include "plugin/tuner/model/topology.h"

namespace railscope::tuner {

// Inclusive range of unsigned values; the default matches everything.
struct Range {
  uint64_t lo = 0;
  uint64_t hi = std::numeric_limits<uint64_t>::max();
  bool contains(uint64_t v) const { return v >= lo && v <= hi; }
  bool overlaps(const Range& o) const { return lo <= o.hi && o.lo <= hi; }
  bool is_any() const { return lo == 0 && hi == std::numeric_limits<uint64_t>::max(); }
};

enum class RuleFormat { Railscope, NcclCsv };

// A pin: where it matches, prefer `algo`/`proto` (either may be -1 = let the model pick within the
// pin), run on `channels` channels (0 = NCCL's count) and use `chunk` bytes per chunk (0 = NCCL's).
struct Rule {
  uint32_t coll_mask = 0;  // bit per Coll
  Range bytes, nodes, ranks, pipe_ops;
  int reg_buff = -1;  // -1 any, 0, 1
  int algo = -1;
  int proto = -1;
  int channels = 0;
  uint64_t chunk = 0;
  int line = 0;
  RuleFormat format = RuleFormat::Railscope;

  bool matches(int coll, uint64_t n_bytes, int n_nodes, int n_ranks, int n_pipe_ops, int reg) const {
    return (coll_mask >> coll & 1u) && bytes.contains(n_bytes) &&
           nodes.contains(static_cast<uint64_t>(n_nodes)) && ranks.contains(static_cast<uint64_t>(n_ranks)) &&
           pipe_ops.contains(static_cast<uint64_t>(n_pipe_ops < 0 ? 0 : n_pipe_ops)) &&
           (reg_buff < 0 || reg_buff == reg);
  }
};

struct MeasuredEntry {
  MeasuredFigure figure;
  int line = 0;
};

// A calibration's cluster fingerprint (`cluster` line): what it was measured on. Empty/0 = not known.
struct ClusterPrint {
  std::string gpu;  // e.g. "H100"
  std::string nic;  // e.g. "mlx5" or "ConnectX-7"
  double nic_gbit = 0;
  int nics = 0;  // NICs per node (after NCCL_IB_HCA)
  // What one rail carries as measured (preflight's rails' median link bandwidth), GB/s; 0 = not measured.
  double rail_gbs = 0;
  int nodes = 0;
  int ranks_per_node = 0;
  int line = 0;
};

// One measured point of a calibration (`point` line): a collective of `bytes` (NCCL's nBytes) run with
// algo/proto on `ranks` ranks over `nodes` nodes, its median bus bandwidth over `samples` runs and the
// spread (half the interquartile range, GB/s) around it, and where it came from.
struct CalibrationPoint {
  int coll = 0, algo = 0, proto = 0;
  uint64_t bytes = 0;
  int channels = 0;  // 0 = not recorded
  int ranks = 0, nodes = 0;
  double busbw_gbs = 0;
  double spread_gbs = 0;
  int samples = 0;
  std::string source;
  int line = 0;
};

struct ConfigError {
  std::string file;
  int line = 0;
  int column = 0;
  std::string message;
  std::string to_string() const;  // "file:line:column: message"
};

struct Config {
  std::string path;  // as given; "" when no file
  std::vector<Rule> rules;
  std::vector<MeasuredEntry> measured;
  NodeOverrides node;  // from `node` lines (sources "config")
  // A calibration (`railscope tuner calibrate`): the cluster it was measured on and its points.
  std::optional<ClusterPrint> cluster;
  std::vector<CalibrationPoint> points;
  // "file:line:column: ..." for each old key name still read (docs/tuner.md), logged once as INFO.
  std::vector<std::string> deprecations;
};

struct ParsedConfig {
  Config config;
  std::vector<ConfigError> errors;  // each bad line is dropped from `config`
};

// Limits of a config (docs/tuner.md): the file's size, the rules and measured entries it may hold (each
// new railscope rule is checked against every earlier one for overlap, each measured entry against every
// earlier one: quadratic, a few milliseconds at these counts), and the errors listed one by one.
inline constexpr size_t kMaxConfigBytes = 1 << 20;
inline constexpr size_t kMaxRules = 4096;
inline constexpr size_t kMaxMeasured = 4096;
inline constexpr size_t kMaxPoints = 16384;
inline constexpr size_t kMaxErrorsListed = 50;

ParsedConfig parse_config_text(std::string_view text, std::string_view file_name);
// Reads and parses a file; an unreadable file, one that is not a regular file (a device, a pipe) or one
// larger than kMaxConfigBytes is one error at line 0.
ParsedConfig load_config_file(const std::string& path);

// The measured figures as the cost model takes them.
std::vector<MeasuredFigure> measured_figures(const Config& config);

}  // namespace railscope::tuner
