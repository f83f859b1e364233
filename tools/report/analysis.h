// What `railscope report` computes from merged profiles: per (op, size) busbw and time quantiles
// with the slowest/fastest rank, the straggler table (who arrives last, how often, by how much),
// the rank×peer wait matrix, and the comparison with a baseline run.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tools/report/profile_reader.h"

namespace railscope::report {

struct SizeRow {
  std::string op;
  int nranks = 0;  // 0 = unknown (profiles from ABI v1..v3)
  uint64_t bytes = 0;
  size_t records = 0;
  size_t ranks = 0;
  double time_p50_us = 0, time_p99_us = 0;
  double busbw_p50 = 0, busbw_p99 = 0;  // p99 = the slow tail: 1st percentile of busbw
  double busbw_min = 0, busbw_max = 0;  // per-rank median busbw: lowest and highest rank
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
  std::vector<std::vector<double>> us;  // [row][column]: mean lateness vs the median rank, µs
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
  std::vector<WaitCell> waits;
  std::string wait_summary;  // one line naming the peer/link waited on most
  Heatmap heatmap;
  std::vector<DiagRow> diags;
  std::vector<std::string> problems;
  bool has_baseline = false;
  std::vector<SizeRow> baseline_sizes;
};

// Percentile by nearest rank on a copy; 0 for an empty input.
double percentile(std::vector<double> v, double p);

std::vector<SizeRow> size_table(const std::vector<CollRow>& colls);
Report analyse(const ProfileSet& run, const ProfileSet* baseline);

}  // namespace railscope::report
