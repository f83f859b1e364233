// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "tools/report/render.h"

namespace railscope::report {

std::string human_bytes(uint64_t bytes) {
  // Whole units only, in integers: every uint64_t value prints exactly (no rounding through double).
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{} {}", bytes, kUnits[unit]);
}

namespace {

// nccl-tests prints the datatype without NCCL's prefix ("float"); the profile has NCCL's name.
std::string short_type(const std::string& dtype) {
  if (dtype.empty()) return "-";
  return dtype.rfind("nccl", 0) == 0 ? dtype.substr(4) : dtype;
}

// busbw needs the rank count: "—" when it is unknown, never algbw in its place.
std::string gbs(const SizeRow& s, double v) { return s.has_busbw ? fmt::format("{:.2f}", v) : "—"; }

std::string job_section(const Report& r) {
  std::string out;
  for (const LaneVerdict& v : r.job_verdicts) {
    const Lane& l = *v.lane;
    const bool by_ord = l.op.empty();
    if (out.empty())
      out =
          "\nJob state per communicator (furthest collective entered by any rank; # = the communicator's "
          "ordinal over its collectives)\n";
    out +=
        fmt::format("  {}{}: {} of {} ranks seen", l.comm, by_ord ? "" : " " + l.op + " (no ordinal: by seq)",
                    v.ranks_seen, l.nranks > 0 ? std::to_string(l.nranks) : "?");
    if (v.frontier)
      out += fmt::format("; furthest {}: entered by {}, completed by {}, waiting in it {}",
                         describe(*v.frontier, by_ord), v.at_frontier, v.completed_frontier, v.waiting);
    out += v.finished ? "; finished\n" : (v.hang ? "; STUCK\n" : "\n");
    constexpr size_t kShown = 8;
    for (size_t i = 0; i < v.behind.size() && i < kShown; ++i) {
      const RankProgress& p = *v.behind[i];
      out +=
          fmt::format("    behind: rank {} ({} pid {}): last entered {}, last completed {}{}\n", p.rank,
                      p.host.empty() ? "?" : p.host, p.pid, p.entered ? describe(*p.entered, by_ord) : "-",
                      p.completed ? describe(*p.completed, by_ord) : "-", p.finished ? " (finalized)" : "");
    }
    if (v.behind.size() > kShown)
      out += fmt::format("    … {} more ranks behind (see --json)\n", v.behind.size() - kShown);
    if (!v.missing.empty())
      out += fmt::format("    no profile: {} ranks (see the diagnoses)\n", v.missing_total);
  }
  return out;
}

// The offset taken off each host's times before lateness is compared across hosts.
std::string clock_section(const Report& r) {
  if (r.clocks.reference.empty()) return "";
  std::string out = fmt::format(
      "\nClock offsets taken off start times before naming stragglers (median difference of collectives' "
      "end times from host {}'s; ± their median spread)\n  {:<16} {:+.3f} ms (reference)\n",
      r.clocks.reference, r.clocks.reference, 0.0);
  for (const HostOffset& o : r.clocks.offsets)
    out += o.collectives > 0 ? fmt::format("  {:<16} {:+.3f} ms ± {:.3f} ms ({} collectives)\n", o.host,
                                           static_cast<double>(o.offset_ns) / 1e6,
                                           static_cast<double>(o.spread_ns) / 1e6, o.collectives)
                             : fmt::format("  {:<16} not aligned (no collective shared with {})\n", o.host,
                                           r.clocks.reference);
  return out;
}

}  // namespace

std::string render_text(const Report& r) {
  std::string out =
      fmt::format("railscope report: {} files, {} hosts, {} records ({} incomplete), {} events dropped\n",
                  r.files, r.hosts, r.records, r.incomplete, r.dropped_events);
  // r.problems are warnings: on stderr through the log (report_command.cpp), not in the output.
  if (!r.sizes.empty()) {
    out +=
        "\nPer (op, size), in nccl-tests' terms  [size B, count = elements, time us, GB/s; p50 = median; "
        "time p99: 99% of samples took at most this; busbw p1/p99: 99% reached at least/at most this "
        "(nearest rank over every rank's samples); min/max = "
        "per-rank medians; redop '-': not in NCCL's profiler events; n*: the profiles give no rank count, n "
        "is the ranks of that communicator in the input; busbw '—': rank count unknown]\n";
    out += fmt::format(
        "{:<14} {:>5} {:>10} {:>11} {:>9} {:>5} {:>7} {:>5} {:>11} {:>11} {:>9} {:>9} {:>9} {:>9} {:>15} "
        "{:>15}{}\n",
        "op", "n", "size", "count", "type", "redop", "samples", "ranks", "time p50", "time p99", "algbw p50",
        "busbw p50", "busbw p1", "busbw p99", "min (rank)", "max (rank)",
        r.has_baseline ? fmt::format("  {:>14}  {:>5}", r.baseline_label.substr(0, 14), "ratio")
                       : std::string());
    for (const SizeRow& s : r.sizes) {
      out += fmt::format(
          "{:<14} {:>5} {:>10} {:>11} {:>9} {:>5} {:>7} {:>5} {:>11.1f} {:>11.1f} {:>9.2f} {:>9} {:>9} "
          "{:>9} {:>15} {:>15}",
          s.op, s.nranks > 0 ? fmt::format("{}{}", s.nranks, s.nranks_from_input ? "*" : "") : "?", s.bytes,
          s.count, short_type(s.dtype), s.redop.empty() ? "-" : s.redop, s.records, s.ranks, s.time_p50_us,
          s.time_p99_us, s.algbw_p50, gbs(s, s.busbw_p50), gbs(s, s.busbw_p1), gbs(s, s.busbw_p99),
          s.has_busbw ? fmt::format("{:.2f} ({})", s.busbw_min, s.rank_min) : "—",
          s.has_busbw ? fmt::format("{:.2f} ({})", s.busbw_max, s.rank_max) : "—");
      if (r.has_baseline) {
        if (s.has_busbw && s.baseline_busbw_p50 && *s.baseline_busbw_p50 > 0)
          out += fmt::format("  {:>14.2f}  {:>5.2f}", *s.baseline_busbw_p50,
                             s.busbw_p50 / *s.baseline_busbw_p50);
        else
          out += fmt::format("  {:>14}  {:>5}", "-", "-");
      }
      out += "\n";
    }
    if (r.has_baseline)
      out += fmt::format("  (busbw p50 of {} vs {}: ratio = {} / {})\n", r.run_label, r.baseline_label,
                         r.run_label, r.baseline_label);
  }
  out += job_section(r);
  out += clock_section(r);
  if (!r.stragglers.empty()) {
    out += "\nStragglers (who arrives last at each collective)\n";
    if (!r.straggler_summary.empty()) out += "  " + r.straggler_summary + "\n";
    out += fmt::format("{:>6} {:>10} {:>8} {:>14} {:>13}\n", "rank", "times last", "of ops", "mean late us",
                       "max late us");
    for (const StragglerRow& s : r.stragglers)
      out += fmt::format("{:>6} {:>10} {:>8} {:>14.1f} {:>13.1f}\n", s.rank, s.times_last, s.ops,
                         s.mean_late_us, s.max_late_us);
  }
  if (!r.waits.empty()) {
    out += "\nRank x peer wait matrix [ms waiting on the peer (SendPeerWait+RecvWait) / on the network]\n";
    if (!r.wait_summary.empty()) out += "  " + r.wait_summary + "\n";
    // Largest cells first; the full matrix is in --json.
    std::vector<WaitCell> cells = r.waits;
    std::sort(cells.begin(), cells.end(), [](const WaitCell& a, const WaitCell& b) {
      return a.peer_wait_us + a.net_us > b.peer_wait_us + b.net_us;
    });
    constexpr size_t kShown = 20;
    for (size_t i = 0; i < cells.size() && i < kShown; ++i)
      out += fmt::format("  rank {:>4} <-> peer {:>4}: {:>10.3f} / {:>10.3f}\n", cells[i].rank, cells[i].peer,
                         cells[i].peer_wait_us / 1e3, cells[i].net_us / 1e3);
    if (cells.size() > kShown) out += fmt::format("  … {} more cells (see --json)\n", cells.size() - kShown);
  }
  if (!r.fabric_ports.empty()) {
    out += "\nFabric: counter deltas per port over the whole run (fabric records)\n";
    out +=
        fmt::format("{:<16} {:<12} {:>7} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>14}\n", "host", "port",
                    "windows", "not active", "loss", "congestion", "pause", "link", "discard", "traffic");
    for (const FabricPortRow& p : r.fabric_ports)
      out += fmt::format("{:<16} {:<12} {:>7} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>14}\n", p.host,
                         p.port, p.windows, p.not_active, p.counts[0], p.counts[1], p.counts[2], p.counts[3],
                         p.counts[4], p.counts[5]);
  }
  if (!r.rail_rates.empty()) {
    out +=
        "\nRail rates: large sends (>= 64 KiB) per host and port over their busy time (net stats lines' "
        "rail_rate; MB/s = 10^6 bytes per second)\n";
    out += fmt::format("{:<16} {:<12} {:>10} {:>10} {:>12} {:>9} {:>9}\n", "host", "port", "MB/s", "sends",
                       "MiB", "busy s", "processes");
    for (const RailRateRow& p : r.rail_rates)
      out += fmt::format("{:<16} {:<12} {:>10.3f} {:>10} {:>12.1f} {:>9.2f} {:>9}\n", p.host, p.port,
                         p.mb_per_s(), p.sends, p.bytes / 1048576.0, p.busy_s, p.processes);
  }
  if (!r.diags.empty()) {
    out += fmt::format("\nDiagnoses ({})\n", r.diags.size());
    for (const DiagRow& d : r.diags)
      out += fmt::format("  [{}] {} rank {}{}: {}. Fix: {}\n", d.id, d.severity, d.rank,
                         d.op.empty() ? std::string()
                                      : fmt::format(" {}{}{}", d.op, d.ord ? fmt::format(" #{}", *d.ord) : "",
                                                    d.seq ? fmt::format(" seq {}", *d.seq) : ""),
                         d.detail, d.fix);
  }
  return out;
}

}  // namespace railscope::report
