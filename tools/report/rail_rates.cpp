// SPDX-License-Identifier: Apache-2.0
// Rail rates across nodes (rail_rates.h).
#include "tools/report/rail_rates.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "railscope/core/median.h"
#include "railscope/node/rail_skew.h"

namespace railscope::report {
namespace {

struct Sum {
  double bytes = 0;
  double busy_s = 0;
  uint64_t sends = 0;
};

uint64_t add_saturating(uint64_t a, uint64_t b) {
  uint64_t s = 0;
  return __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;
}

// A double figure as the unsigned integer node::RailRate holds (clamped: sums of many lines).
uint64_t to_u64(double v) {
  if (!(v > 0)) return 0;
  return v >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(v);
}

}  // namespace

std::vector<RailRateRow> rail_rate_table(const std::vector<RailRateSample>& samples) {
  // (host, port, pid, connection) -> the connection's lines added.
  std::map<std::tuple<std::string, std::string, int64_t, std::string>, Sum> per_connection;
  for (const RailRateSample& s : samples) {
    Sum& c = per_connection[{s.host, s.port, s.pid, s.connection}];
    c.bytes += static_cast<double>(s.bytes);
    c.busy_s += s.busy_s;
    c.sends = add_saturating(c.sends, s.transfers);
  }
  // (host, port, pid) -> its connection with the most bytes.
  std::map<std::tuple<std::string, std::string, int64_t>, Sum> per_process;
  for (const auto& [key, c] : per_connection) {
    Sum& p = per_process[{std::get<0>(key), std::get<1>(key), std::get<2>(key)}];
    if (c.bytes > p.bytes || (c.bytes == p.bytes && c.sends > p.sends)) p = c;
  }
  // (port, host) -> the processes added.
  std::map<std::pair<std::string, std::string>, RailRateRow> per_port;
  for (const auto& [key, p] : per_process) {
    RailRateRow& r = per_port[{std::get<1>(key), std::get<0>(key)}];
    r.host = std::get<0>(key);
    r.port = std::get<1>(key);
    r.bytes += p.bytes;
    r.busy_s = std::max(r.busy_s, p.busy_s);
    r.sends = add_saturating(r.sends, p.sends);
    ++r.processes;
  }
  std::vector<RailRateRow> out;
  for (auto& [key, r] : per_port)
    if (r.sends > 0) out.push_back(std::move(r));
  return out;
}

std::vector<DiagRow> rail_skew_across_nodes(const std::vector<RailRateRow>& rows) {
  std::vector<DiagRow> out;
  // rows are sorted by port: one group per port name.
  for (size_t begin = 0; begin < rows.size();) {
    size_t end = begin;
    while (end < rows.size() && rows[end].port == rows[begin].port) ++end;
    std::vector<node::RailRate> rates;
    for (size_t i = begin; i < end; ++i)
      rates.push_back(
          {rows[i].host, to_u64(rows[i].bytes), to_u64(std::round(rows[i].busy_s * 1e9)), rows[i].sends});
    if (const auto slow = node::slow_rail(rates)) {
      const RailRateRow& s = rows[begin + *slow];
      std::vector<double> others;
      std::string others_text;
      for (size_t i = 0; i < rates.size(); ++i) {
        if (i == *slow || !rates[i].judgeable()) continue;
        others.push_back(rows[begin + i].mb_per_s());
        others_text += fmt::format("{}{} {:.1f} MB/s", others_text.empty() ? "" : ", ", rows[begin + i].host,
                                   rows[begin + i].mb_per_s());
      }
      const size_t n = others.size();
      const double median = core::median(others);
      DiagRow d;
      d.id = "fabric.rail_skew";
      d.severity = "warning";
      d.host = s.host;
      d.detail = fmt::format(
          "{} on {}: large sends (>= {} KiB) ran at {:.1f} MB/s over their busy time ({} sends, {:.1f} MiB, "
          "busy {:.2f} s) while the same port on the other {} hosts has a median of {:.1f} MB/s ({:.2f}x): "
          "{}",
          s.port, s.host, node::kRailRateMinMessageBytes / 1024, s.mb_per_s(), s.sends, s.bytes / 1048576.0,
          s.busy_s, n, median, median > 0 ? s.mb_per_s() / median : 0.0, others_text);
      d.fix = fmt::format(
          "The rail is slow on {} only: check that node's {} (cable, optic, NIC, its switch port's error "
          "counters): `railscope doctor` on {}, `railscope preflight` across the nodes",
          s.host, s.port, s.host);
      out.push_back(std::move(d));
    }
    begin = end;
  }
  return out;
}

}  // namespace railscope::report
