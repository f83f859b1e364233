// SPDX-License-Identifier: Apache-2.0
// What `railscope report` computes from merged profiles: per (op, size) busbw and time quantiles
// with the slowest/fastest rank, the straggler table (who arrives last, how often, by how much),
// the rank×peer wait matrix, and the comparison with a baseline run.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tools/report/clock_offsets.h"
#include "tools/report/job_state.h"
#include "tools/report/profile_reader.h"
#include "tools/report/rail_rates.h"

namespace railscope::report {

struct SizeRow {
  std::string op;
  int nranks = 0;  // 0 = unknown (profiles from ABI v1..v3 whose input does not tell it either)
  bool nranks_from_input = false;  // the records had none: the ranks of that communicator in the input
  uint64_t bytes = 0;              // nccl-tests' size
  uint64_t count = 0;              // nccl-tests' count: elements per rank, as NCCL reports them
  std::string dtype;               // "ncclFloat32"; "" when the profile does not say
  std::string redop;   // "" when the profile does not say (NCCL's profiler API has no reduction op)
  size_t records = 0;  // samples: one per rank and collective
  size_t ranks = 0;
  double time_p50_us = 0, time_p99_us = 0;  // time p99: 99 % of samples took at most this
  double algbw_p50 = 0;
  bool has_busbw = true;  // false: the rank count is unknown, so is busbw (never algbw in its place)
  // busbw p1 (the slow tail): 99 % of samples reach at least this; p99 (the fast edge): 99 % reach at most
  // this. Over every sample of the row (each rank of each collective), by nearest rank (percentile()).
  double busbw_p50 = 0, busbw_p1 = 0, busbw_p99 = 0;
  double busbw_min = 0, busbw_max = 0;      // per-rank median busbw: lowest and highest rank
  double time_min_us = 0, time_max_us = 0;  // per-rank median time: fastest and slowest rank
  int rank_min = -1, rank_max = -1;
  std::optional<double> baseline_busbw_p50;
};

struct StragglerRow {
  int rank = -1;
  size_t times_last = 0;
  size_t ops = 0;  // collectives it took part in (with at least one other rank)
  double mean_late_us = 0;
  double max_late_us = 0;
};

struct WaitCell {
  int rank = -1;
  int peer = -1;
  double peer_wait_us = 0;
  double net_us = 0;
};

struct Heatmap {
  std::vector<int> ranks;               // rows
  size_t columns = 0;                   // collective groups, binned
  size_t collectives = 0;               // collectives in all: column c holds [c·n/columns, (c+1)·n/columns)
  std::vector<std::vector<double>> us;  // [row][column]: mean lateness vs the median rank, µs
};

// One port of one host over all fabric windows (docs/profile-format.md, `fabric`).
struct FabricPortRow {
  std::string host;
  std::string port;
  size_t windows = 0;
  size_t not_active = 0;             // windows that ended with the port not ACTIVE
  std::array<uint64_t, 7> counts{};  // kFabricCategories
};

struct Report {
  size_t files = 0;
  size_t hosts = 0;
  size_t records = 0;
  size_t incomplete = 0;
  uint64_t dropped_events = 0;
  std::vector<std::string> tags;
  std::vector<SizeRow> sizes;
  std::vector<StragglerRow> stragglers;
  std::string straggler_summary;  // one line naming the rank that is most often last
  ClockAlignment clocks;          // offsets taken off the start times before lateness is measured
  std::vector<WaitCell> waits;
  std::string wait_summary;  // one line naming the peer/link waited on most
  Heatmap heatmap;
  std::vector<DiagRow> diags;
  std::vector<std::string> problems;
  bool has_baseline = false;
  std::vector<SizeRow> baseline_sizes;
  // Names of the two sides of an A/B comparison: the profiles' tag, else the transport NCCL was told to use
  // ("railscope", "built-in IB"), else the folder given.
  std::string run_label, baseline_label;
  // Fabric: per-port totals, the windows themselves (for the time line), and busbw samples in time.
  std::vector<FabricPortRow> fabric_ports;
  std::vector<FabricRow> fabric_windows;
  std::vector<std::pair<uint64_t, double>> busbw_in_time;  // (start_unix_ns, busbw GB/s), at most 2000
  // Net stats lines' per-port large-send rates (rail_rates.h); a slow rail is among the diagnoses.
  std::vector<RailRateRow> rail_rates;
  // The whole job's progress per communicator (job_state.h); its findings are among the diagnoses.
  std::shared_ptr<const JobState> job;
  std::vector<LaneVerdict> job_verdicts;
};

// Percentile by nearest rank on a copy: of n samples sorted ascending, the k-th smallest with
// k = ceil(p/100 · n), at least 1 (no interpolation: every value printed was measured); 0 for an empty
// input.
double percentile(std::vector<double> v, double p);

std::vector<SizeRow> size_table(const CollRows& colls);
// What to call a set of profiles on an A/B page (see Report::run_label).
std::string set_label(const ProfileSet& set, const std::string& fallback);
Report analyse(const ProfileSet& run, const ProfileSet* baseline);

}  // namespace railscope::report
