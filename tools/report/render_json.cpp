// SPDX-License-Identifier: Apache-2.0
#include <nlohmann/json.hpp>

#include "tools/report/render.h"

namespace railscope::report {
namespace {

nlohmann::json call_json(const std::optional<Call>& c) {
  if (!c) return nullptr;
  return {{"index", c->index}, {"op", c->op}, {"count", c->count}, {"dtype", c->dtype}, {"seq", c->seq}};
}

nlohmann::json job_json(const std::vector<LaneVerdict>& verdicts) {
  using nlohmann::json;
  json lanes = json::array();
  for (const LaneVerdict& v : verdicts) {
    const Lane& l = *v.lane;
    json ranks = json::array();
    for (const auto& [rank, p] : l.ranks)
      ranks.push_back({{"rank", rank},
                       {"host", p.host},
                       {"pid", p.pid},
                       {"entered", call_json(p.entered)},
                       {"completed", call_json(p.completed)},
                       {"waiting", p.waiting},
                       {"finished", p.finished}});
    json behind = json::array();
    for (const RankProgress* p : v.behind) behind.push_back(p->rank);
    lanes.push_back({{"comm", l.comm},
                     {"keyed_by", l.op.empty() ? "ord" : "seq"},
                     {"op", l.op},
                     {"nranks", l.nranks},
                     {"ranks_seen", v.ranks_seen},
                     {"frontier", call_json(v.frontier)},
                     {"at_frontier", v.at_frontier},
                     {"completed_frontier", v.completed_frontier},
                     {"waiting", v.waiting},
                     {"waiting_since_unix_ns", v.waiting_since_ns},
                     {"behind", behind},
                     {"missing", v.missing},
                     {"missing_total", v.missing_total},
                     {"mismatches", v.mismatches_total},
                     {"stuck", v.hang},
                     {"finished", v.finished},
                     {"ranks", ranks}});
  }
  return lanes;
}

}  // namespace

std::string render_json(const Report& r) {
  using nlohmann::json;
  json j;
  j["schema"] = "railscope.report";
  j["version"] = 1;
  j["files"] = r.files;
  j["hosts"] = r.hosts;
  j["records"] = r.records;
  j["incomplete"] = r.incomplete;
  j["dropped_events"] = r.dropped_events;
  j["tags"] = r.tags;
  j["problems"] = r.problems;
  json sizes = json::array();
  for (const SizeRow& s : r.sizes) {
    json row = {{"op", s.op},
                {"nranks", s.nranks},
                {"bytes", s.bytes},
                {"count", s.count},
                {"dtype", s.dtype},
                {"redop", s.redop},
                {"records", s.records},
                {"ranks", s.ranks},
                {"time_p50_us", s.time_p50_us},
                {"time_p99_us", s.time_p99_us},
                {"time_min_us", s.time_min_us},
                {"time_max_us", s.time_max_us},
                {"busbw_p50_gbs", s.busbw_p50},
                {"algbw_p50_gbs", s.algbw_p50},
                {"busbw_p1_gbs", s.busbw_p1},
                {"busbw_p99_gbs", s.busbw_p99},
                {"busbw_min_gbs", s.busbw_min},
                {"busbw_min_rank", s.rank_min},
                {"busbw_max_gbs", s.busbw_max},
                {"busbw_max_rank", s.rank_max}};
    if (s.baseline_busbw_p50) row["baseline_busbw_p50_gbs"] = *s.baseline_busbw_p50;
    row["nranks_from_input"] = s.nranks_from_input;
    if (!s.has_busbw)
      for (const char* k :
           {"busbw_p50_gbs", "busbw_p1_gbs", "busbw_p99_gbs", "busbw_min_gbs", "busbw_max_gbs"})
        row[k] = nullptr;
    sizes.push_back(row);
  }
  j["sizes"] = sizes;
  json st = json::array();
  for (const StragglerRow& s : r.stragglers)
    st.push_back({{"rank", s.rank},
                  {"times_last", s.times_last},
                  {"ops", s.ops},
                  {"mean_late_us", s.mean_late_us},
                  {"max_late_us", s.max_late_us}});
  j["stragglers"] = st;
  j["straggler_summary"] = r.straggler_summary;
  json clocks = {{"reference", r.clocks.reference}, {"offsets", json::array()}};
  for (const HostOffset& o : r.clocks.offsets)
    clocks["offsets"].push_back({{"host", o.host},
                                 {"offset_ns", o.offset_ns},
                                 {"spread_ns", o.spread_ns},
                                 {"collectives", o.collectives}});
  j["clock_alignment"] = clocks;
  j["job"] = job_json(r.job_verdicts);
  json waits = json::array();
  for (const WaitCell& w : r.waits)
    waits.push_back(
        {{"rank", w.rank}, {"peer", w.peer}, {"peer_wait_us", w.peer_wait_us}, {"net_us", w.net_us}});
  j["wait_matrix"] = waits;
  j["wait_summary"] = r.wait_summary;
  json diags = json::array();
  for (const DiagRow& d : r.diags) {
    json dj = {{"id", d.id},    {"severity", d.severity}, {"comm", d.comm}, {"rank", d.rank},
               {"op", d.op},    {"detail", d.detail},     {"fix", d.fix},   {"unix_ns", d.unix_ns},
               {"host", d.host}};
    if (d.seq) dj["seq"] = *d.seq;
    if (d.ord) dj["ord"] = *d.ord;
    diags.push_back(dj);
  }
  j["diagnoses"] = diags;
  json ports = json::array();
  for (const FabricPortRow& p : r.fabric_ports) {
    json pj = {{"host", p.host}, {"port", p.port}, {"windows", p.windows}, {"not_active", p.not_active}};
    for (size_t k = 0; k < p.counts.size(); ++k) pj[kFabricCategories[k]] = p.counts[k];
    ports.push_back(pj);
  }
  j["fabric_ports"] = ports;
  json rails = json::array();
  for (const RailRateRow& p : r.rail_rates)
    rails.push_back({{"host", p.host},
                     {"port", p.port},
                     {"MBps", p.mb_per_s()},
                     {"sends", p.sends},
                     {"bytes", p.bytes},
                     {"busy_s", p.busy_s},
                     {"processes", p.processes}});
  j["rail_rates"] = rails;
  if (r.has_baseline) {
    json b = json::array();
    for (const SizeRow& s : r.baseline_sizes)
      b.push_back(
          {{"op", s.op}, {"bytes", s.bytes}, {"busbw_p50_gbs", s.busbw_p50}, {"time_p50_us", s.time_p50_us}});
    j["baseline_sizes"] = b;
    j["run_label"] = r.run_label;
    j["baseline_label"] = r.baseline_label;
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace railscope::report
