// SPDX-License-Identifier: Apache-2.0
// Compares the op samples of two variants (railscope vs. NCCL's built-in transport) per (op, size).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "profile_samples.h"

namespace railscope::ab {

using OpKey = std::pair<std::string, std::uint64_t>;  // (op, bytes)

// One run of one variant: its label, its folder, and what was read from it.
struct RunSamples {
  std::string label;
  std::string folder;
  std::vector<OpSample> samples;
};

struct Stats {
  std::size_t count = 0;
  double busbw_p50 = 0,
         busbw_p1 = 0;  // GB/s; p1 = the 1st percentile, the slow tail: 99 % of samples are at least this
  double time_p50 = 0, time_p99 = 0;  // microseconds; p99: 99 % of samples took at most this
};

struct ComparisonRow {
  OpKey key;
  Stats a, b;
  double ratio = 0;  // a.busbw_p50 / b.busbw_p50 (0 when b's is 0)
};

struct Comparison {
  std::string label_a, label_b;
  std::vector<ComparisonRow> rows;  // sorted by op, then size
};

// Nearest-rank percentile (q in [0, 100]) of unsorted values; 0 for an empty list.
double percentile(std::vector<double> values, double q);

// Checks every run measured the same set of (op, size) and builds the comparison. Returns an error
// message naming the runs and the first differing keys when the sets differ, or when a run has no
// op records at all.
std::string compare_runs(const std::vector<RunSamples>& a_runs, const std::vector<RunSamples>& b_runs,
                         Comparison& out);

std::string format_table(const Comparison& cmp);
// `extra`'s members (an object; e.g. the calibration verdict) are added to the document.
std::string format_json(const Comparison& cmp, const nlohmann::json& extra = nullptr);
std::string format_size(std::uint64_t bytes);

}  // namespace railscope::ab
