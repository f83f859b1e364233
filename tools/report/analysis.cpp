// SPDX-License-Identifier: Apache-2.0
#include "tools/report/analysis.h"

#include "plugin/profiler/core/bandwidth.h"
#include "tools/report/rail_rates.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace railscope::report {

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = std::ceil(p / 100.0 * static_cast<double>(v.size()));
  const size_t idx = pos < 1.0 ? 0 : static_cast<size_t>(pos) - 1;
  return v[std::min(idx, v.size() - 1)];
}

namespace {

// The ranks of each communicator in the input when they are exactly 0..n-1 with n >= 2: its rank
// count for records that do not carry one (ABI v1..v3). Otherwise absent: the input may hold only
// some of its ranks.
std::map<std::string, int> nranks_in_input(const CollRows& colls) {
  std::map<std::string, std::set<int>> ranks;
  for (const CollRow& c : colls)
    if (!c.p2p && c.nranks <= 0 && c.rank >= 0) ranks[c.comm].insert(c.rank);
  std::map<std::string, int> out;
  for (const auto& [comm, set] : ranks)
    if (set.size() >= 2 && *set.rbegin() == static_cast<int>(set.size()) - 1)
      out[comm] = static_cast<int>(set.size());
  return out;
}

}  // namespace

std::vector<SizeRow> size_table(const CollRows& colls) {
  struct Acc {
    std::vector<double> time, busbw, algbw;
    std::map<int, std::vector<double>> per_rank, per_rank_time;
    bool nranks_from_input = false;
    bool busbw_unknown = false;
  };
  const std::map<std::string, int> input_nranks = nranks_in_input(colls);
  std::map<std::tuple<std::string, int, uint64_t, std::string, std::string>, Acc> acc;
  std::map<std::tuple<std::string, int, uint64_t, std::string, std::string>, uint64_t> counts;
  for (const CollRow& c : colls) {
    if (!c.complete || !c.time_us) continue;
    int nranks = c.nranks;
    std::optional<double> busbw = c.busbw_gbs;
    bool from_input = false;
    if (nranks <= 0)
      if (auto it = input_nranks.find(c.comm); it != input_nranks.end()) {
        nranks = it->second;
        from_input = true;
      }
    if (!busbw && c.algbw_gbs)
      if (auto f = profiler::busbw_factor(profiler::op_from_name(c.op.c_str()), nranks))
        busbw = *c.algbw_gbs * *f;
    const auto key = std::make_tuple(c.op, nranks, c.bytes, c.dtype, c.redop);
    Acc& a = acc[key];
    counts[key] = c.count;
    a.nranks_from_input = a.nranks_from_input || from_input;
    a.busbw_unknown = a.busbw_unknown || !busbw;
    a.time.push_back(*c.time_us);
    a.algbw.push_back(c.algbw_gbs.value_or(0.0));
    const double bw = busbw.value_or(0.0);
    a.busbw.push_back(bw);
    a.per_rank[c.rank].push_back(bw);
    a.per_rank_time[c.rank].push_back(*c.time_us);
  }
  std::vector<SizeRow> rows;
  for (auto& [key, a] : acc) {
    SizeRow r;
    r.op = std::get<0>(key);
    r.nranks = std::get<1>(key);
    r.bytes = std::get<2>(key);
    r.dtype = std::get<3>(key);
    r.redop = std::get<4>(key);
    r.count = counts[key];
    r.nranks_from_input = a.nranks_from_input;
    r.has_busbw = !a.busbw_unknown;
    r.records = a.time.size();
    r.ranks = a.per_rank.size();
    r.time_p50_us = percentile(a.time, 50);
    r.time_p99_us = percentile(a.time, 99);
    r.busbw_p50 = percentile(a.busbw, 50);
    r.busbw_p1 = percentile(a.busbw, 1);
    r.busbw_p99 = percentile(a.busbw, 99);
    r.algbw_p50 = percentile(a.algbw, 50);
    bool first = true;
    for (auto& [rank, v] : a.per_rank) {
      const double med = percentile(v, 50);
      if (first || med < r.busbw_min) r.busbw_min = med, r.rank_min = rank;
      if (first || med > r.busbw_max) r.busbw_max = med, r.rank_max = rank;
      first = false;
    }
    first = true;
    for (auto& [rank, v] : a.per_rank_time) {
      const double med = percentile(v, 50);
      if (first || med < r.time_min_us) r.time_min_us = med;
      if (first || med > r.time_max_us) r.time_max_us = med;
      first = false;
    }
    rows.push_back(r);
  }
  return rows;
}

namespace {

// Collectives of the same communicator, op and sequence number seen on several ranks.
using GroupKey = std::tuple<std::string, std::string, uint64_t>;

void stragglers(const CollRows& colls, const ClockAlignment& clocks, Report& out) {
  std::map<GroupKey, std::vector<const CollRow*>> groups;
  for (const CollRow& c : colls)
    if (!c.p2p && c.start_unix_ns != 0) groups[{c.comm, c.op, c.seq}].push_back(&c);
  // Start times on the reference host's clock.
  auto start = [&](const CollRow* r) {
    const int64_t off = r->file < clocks.per_file.size() ? clocks.per_file[r->file] : 0;
    return static_cast<double>(r->start_unix_ns) - static_cast<double>(off);
  };
  struct Acc {
    size_t last = 0, ops = 0;
    double late_sum = 0, late_max = 0;
  };
  std::map<int, Acc> per_rank;
  // (first start, (rank, lateness) by rank): a flat list, not a map per collective, which at 4 M records
  // was a few hundred MB.
  std::vector<std::pair<uint64_t, std::vector<std::pair<int, double>>>> timeline;
  for (auto& [key, rows] : groups) {
    std::set<int> ranks;
    for (const CollRow* r : rows) ranks.insert(r->rank);
    if (ranks.size() < 2) continue;
    std::vector<double> starts;
    for (const CollRow* r : rows) starts.push_back(start(r));
    const double median = percentile(starts, 50);
    const CollRow* last = *std::max_element(
        rows.begin(), rows.end(), [&](const CollRow* a, const CollRow* b) { return start(a) < start(b); });
    std::vector<std::pair<int, double>> lateness;
    uint64_t first = UINT64_MAX;
    for (const CollRow* r : rows) {
      per_rank[r->rank].ops++;
      lateness.emplace_back(r->rank, (start(r) - median) / 1e3);
      first = std::min(first, r->start_unix_ns);
    }
    // One per rank, its last record's as a map assigned in turn would keep.
    std::stable_sort(lateness.begin(), lateness.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    auto last_of_rank = std::unique(lateness.rbegin(), lateness.rend(),
                                    [](const auto& a, const auto& b) { return a.first == b.first; });
    lateness.erase(lateness.begin(), last_of_rank.base());
    lateness.shrink_to_fit();
    const double late_us = (start(last) - median) / 1e3;
    if (late_us > 0) {
      Acc& a = per_rank[last->rank];
      a.last++;
      a.late_sum += late_us;
      a.late_max = std::max(a.late_max, late_us);
    }
    timeline.emplace_back(first, std::move(lateness));
  }
  for (auto& [rank, a] : per_rank) {
    StragglerRow r;
    r.rank = rank;
    r.times_last = a.last;
    r.ops = a.ops;
    r.mean_late_us = a.last ? a.late_sum / static_cast<double>(a.last) : 0.0;
    r.max_late_us = a.late_max;
    out.stragglers.push_back(r);
  }
  std::sort(out.stragglers.begin(), out.stragglers.end(), [](const StragglerRow& a, const StragglerRow& b) {
    return std::tie(b.times_last, b.mean_late_us) < std::tie(a.times_last, a.mean_late_us);
  });
  // Some rank is always last by a little: a straggler is one that is last in at least half of (at least
  // kStragglerMinOps) collectives, by more than the clocks' alignment can tell apart from noise.
  constexpr size_t kStragglerMinOps = 3;
  const double noise_us = 3.0 * static_cast<double>(clocks.max_spread_ns) / 1e3;
  if (!out.stragglers.empty() && out.stragglers.front().ops >= kStragglerMinOps &&
      2 * out.stragglers.front().times_last >= out.stragglers.front().ops &&
      out.stragglers.front().mean_late_us > noise_us) {
    const StragglerRow& s = out.stragglers.front();
    out.straggler_summary = fmt::format(
        "rank {} arrived last in {} of {} collectives ({:.0f}%), on average {:.1f} us after the median rank",
        s.rank, s.times_last, s.ops, 100.0 * static_cast<double>(s.times_last) / static_cast<double>(s.ops),
        s.mean_late_us);
  }
  // Heatmap: rows = ranks, columns = collectives in time order, binned to at most 60 columns.
  std::sort(timeline.begin(), timeline.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [rank, a] : per_rank) out.heatmap.ranks.push_back(rank);
  const size_t cols = std::min<size_t>(60, timeline.size());
  out.heatmap.columns = cols;
  out.heatmap.collectives = timeline.size();
  out.heatmap.us.assign(out.heatmap.ranks.size(), std::vector<double>(cols, 0.0));
  std::vector<std::vector<int>> counts(out.heatmap.ranks.size(), std::vector<int>(cols, 0));
  // Each collective's own ranks, not every rank for each collective (ranks x collectives lookups).
  const std::vector<int>& rows = out.heatmap.ranks;  // sorted: per_rank is a map
  for (size_t i = 0; i < timeline.size(); ++i) {
    const size_t col = i * cols / timeline.size();
    for (const auto& [rank, late] : timeline[i].second) {
      const size_t row = static_cast<size_t>(std::lower_bound(rows.begin(), rows.end(), rank) - rows.begin());
      out.heatmap.us[row][col] += late;
      counts[row][col]++;
    }
  }
  for (size_t row = 0; row < out.heatmap.ranks.size(); ++row)
    for (size_t col = 0; col < cols; ++col)
      if (counts[row][col]) out.heatmap.us[row][col] /= counts[row][col];
}

void wait_matrix(const ProfileSet& run, Report& out) {
  std::map<std::pair<int, int>, WaitCell> cells;
  for (const auto& [key, sum] : run.folded_waits) {
    WaitCell& cell = cells[key];
    cell.rank = key.first;
    cell.peer = key.second;
    cell.peer_wait_us += sum.peer_wait_us;
    cell.net_us += sum.net_us;
  }
  for (const CollRow& c : run.colls)
    for (const WaitRow& w : c.waits) {
      WaitCell& cell = cells[{c.rank, w.peer}];
      cell.rank = c.rank;
      cell.peer = w.peer;
      cell.peer_wait_us += w.peer_wait_us;
      cell.net_us += w.net_us;
    }
  std::map<int, double> by_peer;
  for (auto& [key, cell] : cells) {
    out.waits.push_back(cell);
    by_peer[cell.peer] += cell.peer_wait_us;
  }
  if (by_peer.empty()) return;
  const auto worst = std::max_element(by_peer.begin(), by_peer.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
  const auto link =
      std::max_element(out.waits.begin(), out.waits.end(), [](const WaitCell& a, const WaitCell& b) {
        return a.peer_wait_us + a.net_us < b.peer_wait_us + b.net_us;
      });
  double total = 0;
  for (const auto& [peer, us] : by_peer) total += us;
  out.wait_summary = fmt::format(
      "peer {} is waited on most ({:.1f} ms of {:.1f} ms peer-wait across all ranks); slowest link: rank {} "
      "<-> "
      "peer {} ({:.1f} ms peer-wait + {:.1f} ms network)",
      worst->first, worst->second / 1e3, total / 1e3, link->rank, link->peer, link->peer_wait_us / 1e3,
      link->net_us / 1e3);
}

}  // namespace

std::string set_label(const ProfileSet& set, const std::string& fallback) {
  auto joined = [](const std::vector<std::string>& v) {
    std::set<std::string> unique(v.begin(), v.end());
    std::string out;
    for (const std::string& x : unique) out += (out.empty() ? "" : "+") + x;
    return out;
  };
  if (!set.tags.empty()) return joined(set.tags);
  // NCCL_NET picks the transport by name: railscope's own, or one of NCCL's built-in ones (IB, Socket).
  if (!set.nets.empty()) {
    std::vector<std::string> names;
    for (const std::string& n : set.nets) names.push_back(n == "railscope" ? n : "built-in " + n);
    return joined(names);
  }
  for (const std::string& p : set.net_plugins)
    if (p.find("railscope") != std::string::npos) return "railscope";
  if (!set.paths.empty()) {
    std::string p = set.paths.front();
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    const size_t slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
  }
  return fallback;
}

namespace {

void fabric(const ProfileSet& run, Report& out) {
  std::map<std::pair<std::string, std::string>, FabricPortRow> ports;
  for (const FabricRow& f : run.fabric) {
    FabricPortRow& p = ports[{f.host, f.port}];
    p.host = f.host;
    p.port = f.port;
    ++p.windows;
    if (f.state != "ACTIVE") ++p.not_active;
    for (size_t k = 0; k < p.counts.size(); ++k) p.counts[k] += f.counts[k];
  }
  for (auto& [key, p] : ports) out.fabric_ports.push_back(p);
  out.fabric_windows = run.fabric;
  std::sort(out.fabric_windows.begin(), out.fabric_windows.end(),
            [](const FabricRow& a, const FabricRow& b) { return a.end_unix_ns < b.end_unix_ns; });
  // busbw in time, thinned evenly to at most 2000 samples (the time line is a few hundred pixels wide).
  std::vector<std::pair<uint64_t, double>> all;
  for (const CollRow& c : run.colls)
    if (!c.p2p && c.busbw_gbs && c.start_unix_ns != 0) all.emplace_back(c.start_unix_ns, *c.busbw_gbs);
  std::sort(all.begin(), all.end());
  constexpr size_t kMax = 2000;
  const size_t stride = (all.size() + kMax - 1) / kMax;
  for (size_t i = 0; i < all.size(); i += stride) out.busbw_in_time.push_back(all[i]);
}

}  // namespace

Report analyse(const ProfileSet& run, const ProfileSet* baseline) {
  Report out;
  out.files = run.files.size();
  std::set<std::string> hosts(run.hosts.begin(), run.hosts.end());
  for (const RailRateSample& r : run.rail_rates) hosts.insert(r.host);
  out.hosts = hosts.size();
  out.records = run.colls.size();
  for (const CollRow& c : run.colls) out.incomplete += c.complete ? 0 : 1;
  out.dropped_events = run.dropped_events;
  out.tags = run.tags;
  out.sizes = size_table(run.colls);
  out.clocks = align_clocks(run);
  stragglers(run.colls, out.clocks, out);
  wait_matrix(run, out);
  fabric(run, out);
  out.diags = run.diags;
  auto job = std::make_shared<JobState>();
  job->add(run);
  out.job_verdicts = job->verdicts();
  out.job = std::move(job);
  uint64_t last_ns = 0;  // the findings' time: the profiles' latest, so the report of a file is reproducible
  for (const CollRow& c : run.colls) last_ns = std::max(last_ns, std::max(c.end_unix_ns, c.start_unix_ns));
  for (const DiagRow& d : run.diags) last_ns = std::max(last_ns, d.unix_ns);
  for (DiagRow& d : job_findings(out.job_verdicts, last_ns)) out.diags.push_back(std::move(d));
  out.rail_rates = rail_rate_table(run.rail_rates);
  for (DiagRow& d : rail_skew_across_nodes(out.rail_rates)) out.diags.push_back(std::move(d));
  std::sort(out.diags.begin(), out.diags.end(),
            [](const DiagRow& a, const DiagRow& b) { return a.unix_ns < b.unix_ns; });
  out.problems = run.problems;
  if (baseline != nullptr) {
    out.has_baseline = true;
    out.run_label = set_label(run, "run");
    out.baseline_label = set_label(*baseline, "baseline");
    if (out.baseline_label == out.run_label) out.baseline_label += " (baseline)";
    out.baseline_sizes = size_table(baseline->colls);
    for (SizeRow& r : out.sizes)
      for (const SizeRow& b : out.baseline_sizes)
        if (b.op == r.op && b.nranks == r.nranks && b.bytes == r.bytes && b.has_busbw)
          r.baseline_busbw_p50 = b.busbw_p50;
    for (const std::string& p : baseline->problems) out.problems.push_back("baseline: " + p);
  }
  return out;
}

}  // namespace railscope::report
