// SPDX-License-Identifier: Apache-2.0
// The cluster's fingerprint for `railscope tuner calibrate --preflight REPORT.json`, read from what
// `railscope preflight --json` wrote (schema railscope.preflight/2, docs/preflight.md): the nodes that
// joined, the NICs (rails) each drives, their line rate and family. A report of another schema, or one
// that is not JSON or whose nodes do not read as preflight's own node reports, is refused whole.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace railscope::cli::tuner_calibrate {

struct PreflightFacts {
  int nodes = 0;        // distinct hosts that joined
  int nics = 0;         // active NICs per node (the count most nodes have)
  double nic_gbit = 0;  // the line rate most active NICs share, Gbit/s; 0 = unknown
  std::string nic;      // the NICs' device family ("mlx5" from mlx5_0…) when every node's agree
  std::string status;   // the report's verdict: "ok", "warning", "error"
  std::vector<double> rail_median_gbs;  // per rail, the measured links' median (empty: not measured)
  double rail_gbs = 0;  // the median of the rails' medians, GB/s: what one rail carries; 0 = not measured
  std::vector<std::string> concerns;  // nodes whose NICs differ from the rest, a verdict other than ok
};

// A preflight report is at most this large (a 4,096-node run with every link measured is ~31 MiB).
inline constexpr std::uintmax_t kMaxPreflightBytes = 256ull << 20;

// nullopt with *error saying what is wrong (the schema found, the field, the JSON parser's position).
std::optional<PreflightFacts> preflight_facts(const nlohmann::json& report, std::string* error);
std::optional<PreflightFacts> read_preflight_report(const std::string& path, std::string* error);

}  // namespace railscope::cli::tuner_calibrate
