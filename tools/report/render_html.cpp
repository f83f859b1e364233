// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "tools/report/render.h"
#include "tools/report/svg_plot.h"

namespace railscope::report {
namespace {

constexpr const char* kStyle = R"(
body{font-family:system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:8px 0 24px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}
.frame{fill:none;stroke:#888}.grid{stroke:#e5e5e5}.tick{font-size:11px;fill:#555}.axis{font-size:12px;fill:#333}
.title{font-size:14px;font-weight:600}.series{fill:none;stroke-width:2}.series.run{stroke:#1f77b4}
.series.baseline{stroke:#d62728;stroke-dasharray:6 4}.point.run{fill:#1f77b4}.point.baseline{fill:#d62728}
.legend{font-size:12px}.legend.run{fill:#1f77b4}.legend.baseline{fill:#d62728}.plots svg{margin:0 16px 16px 0}
.band{stroke:none;fill-opacity:.18}.band.run{fill:#1f77b4}.band.baseline{fill:#d62728}
.swatch{stroke-width:2}.swatch.run{stroke:#1f77b4}.swatch.baseline{stroke:#d62728;stroke-dasharray:6 4}
circle.busbw{fill:#1f77b4}rect.window.trouble{fill:#d62728}rect.window.clean{fill:#2ca02c}
.sev-error{color:#b00}.sev-warning{color:#a60}
)";

// Runs after load: counts what was drawn and records any script error on <body>, so a headless
// browser's DOM dump shows both.
constexpr const char* kCheckScript = R"(
window.addEventListener('error', function(){ var b=document.body; b.dataset.jsErrors=String(Number(b.dataset.jsErrors||0)+1); });
window.addEventListener('load', function(){
  var drawn=0; document.querySelectorAll('svg.plot path.series').forEach(function(p){ if(p.getTotalLength()>0||p.getAttribute('d').length>2) drawn++; });
  document.body.dataset.plotsDrawn=String(drawn);
  // A band drawn with an area, and the p50 line of its series inside it (p1 <= p50 <= p99).
  var bands=0, around=0;
  document.querySelectorAll('svg.plot path.band').forEach(function(b){
    var bb=b.getBBox(); if(bb.width>0&&bb.height>0) bands++;
    var cls=b.classList.contains('run')?'run':'baseline';
    var line=b.ownerSVGElement.querySelector('path.series.'+cls); if(!line) return; var lb=line.getBBox();
    if(lb.x>=bb.x-0.5&&lb.y>=bb.y-0.5&&lb.x+lb.width<=bb.x+bb.width+0.5&&lb.y+lb.height<=bb.y+bb.height+0.5) around++;
  });
  document.body.dataset.bandsDrawn=String(bands);
  document.body.dataset.bandsAroundLine=String(around);
  document.body.dataset.heatmapCells=String(document.querySelectorAll('svg.heatmap rect.cell').length);
  document.body.dataset.fabricWindows=String(document.querySelectorAll('svg.timeline rect.window').length);
  // Layout as rendered: a title past its picture's edge, a legend over a plot's frame.
  var clipped=0, over=0, legendsClipped=0, legendsOverlap=0;
  document.querySelectorAll('svg').forEach(function(svg){
    var w=svg.width.baseVal.value;
    svg.querySelectorAll('text.title').forEach(function(t){ var b=t.getBBox(); if(b.x<0||b.x+b.width>w+0.5) clipped++; });
    var f=svg.querySelector('rect.frame'); if(!f) return; var fb=f.getBBox();
    svg.querySelectorAll('text.legend').forEach(function(t){ var b=t.getBBox();
      if(b.x+b.width>w+0.5) legendsClipped++;
      if(b.y<fb.y+fb.height && b.y+b.height>fb.y && b.x<fb.x+fb.width && b.x+b.width>fb.x) over++; });
    // Legend entries that run into the next one on their row.
    var entries=Array.prototype.slice.call(svg.querySelectorAll('text.legend'));
    entries.forEach(function(t){ var b=t.getBBox(); entries.forEach(function(u){ if(u===t) return; var c=u.getBBox();
      if(c.x>b.x && Math.abs(c.y-b.y)<1 && c.x<b.x+b.width+30) legendsOverlap++; }); });
  });
  document.body.dataset.titlesClipped=String(clipped);
  document.body.dataset.legendsClipped=String(legendsClipped);
  document.body.dataset.legendsOverlap=String(legendsOverlap);
  document.body.dataset.legendsOverPlot=String(over);
});
)";

// The fabric section: the time line (busbw over the fabric windows) and the per-port table.
std::string render_fabric_html(const Report& r) {
  if (r.fabric_ports.empty()) return {};
  uint64_t origin = UINT64_MAX;
  for (const auto& [t, bw] : r.busbw_in_time) origin = std::min(origin, t);
  for (const FabricRow& f : r.fabric_windows) origin = std::min(origin, f.start_unix_ns);
  auto seconds = [&](uint64_t t) { return t >= origin ? static_cast<double>(t - origin) / 1e9 : 0.0; };
  std::vector<std::pair<double, double>> busbw;
  for (const auto& [t, bw] : r.busbw_in_time) busbw.emplace_back(seconds(t), bw);
  // One bar per window (its ports together, over every host).
  std::map<std::pair<uint64_t, uint64_t>, TimelineWindow> windows;
  for (const FabricRow& f : r.fabric_windows) {
    TimelineWindow& w = windows[{f.start_unix_ns, f.end_unix_ns}];
    w.t0_s = seconds(f.start_unix_ns);
    w.t1_s = seconds(f.end_unix_ns);
    uint64_t trouble = f.state == "ACTIVE" ? 0 : 1;
    for (size_t k = 0; k < 5; ++k) trouble += f.counts[k];  // loss … discard; not traffic or other
    w.trouble += trouble;
    if (trouble > 0 || w.label.empty())
      w.label += fmt::format("{}{} {} {}: loss {}, congestion {}, pause {}, link {}, discard {}",
                             w.label.empty() ? "" : "\n", f.host, f.port, f.state, f.counts[0], f.counts[1],
                             f.counts[2], f.counts[3], f.counts[4]);
  }
  std::vector<TimelineWindow> bars;
  for (auto& [key, w] : windows) bars.push_back(std::move(w));
  std::string h = "<h2>Fabric</h2>";
  h += svg_fabric_timeline(busbw, bars);
  h += "<table class=\"fabric\"><tr><th class=\"l\">host</th><th class=\"l\">port</th><th>windows</th>"
       "<th>not ACTIVE</th><th>loss</th><th>congestion</th><th>pause</th><th>link</th><th>discard</th>"
       "<th>traffic</th></tr>";
  for (const FabricPortRow& p : r.fabric_ports)
    h += fmt::format(
        "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        xml_escape(p.host), xml_escape(p.port), p.windows, p.not_active, p.counts[0], p.counts[1],
        p.counts[2], p.counts[3], p.counts[4], p.counts[5]);
  return h + "</table>";
}

}  // namespace

std::string render_html(const Report& r) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>railscope report</title>";
  h += fmt::format("<style>{}</style></head><body data-js-errors=\"0\">", kStyle);
  h += "<h1>railscope report</h1>";
  h += fmt::format("<p>{} files from {} hosts, {} records ({} incomplete), {} events dropped{}.</p>", r.files,
                   r.hosts, r.records, r.incomplete, r.dropped_events,
                   r.has_baseline ? fmt::format("; solid blue: {}, dashed red: {}", xml_escape(r.run_label),
                                                xml_escape(r.baseline_label))
                                  : std::string());
  for (const std::string& p : r.problems)
    h += fmt::format("<p class=\"sev-warning\">warning: {}</p>", xml_escape(p));

  // Plots: busbw vs size per op, baseline overlaid.
  std::map<std::string, Series> run, base;
  auto plot_key = [](const SizeRow& s) {
    return s.nranks > 0 ? fmt::format("{} (n = {})", s.op, s.nranks) : s.op;
  };
  for (const SizeRow& s : r.sizes) {
    if (!s.has_busbw) continue;
    Series& se = run[plot_key(s)];
    se.name = r.has_baseline ? r.run_label + " (busbw p50)" : "busbw p50";
    se.css_class = "run";
    se.points.emplace_back(static_cast<double>(s.bytes), s.busbw_p50);
    se.band_name = r.has_baseline ? r.run_label + " (busbw p1–p99)" : "busbw p1–p99";
    se.band.push_back({static_cast<double>(s.bytes), s.busbw_p1, s.busbw_p99});
  }
  for (const SizeRow& s : r.baseline_sizes) {
    if (!s.has_busbw) continue;
    Series& se = base[plot_key(s)];
    se.name = r.baseline_label + " (busbw p50)";
    se.css_class = "baseline";
    se.points.emplace_back(static_cast<double>(s.bytes), s.busbw_p50);
    se.band_name = r.baseline_label + " (busbw p1–p99)";
    se.band.push_back({static_cast<double>(s.bytes), s.busbw_p1, s.busbw_p99});
  }
  std::set<std::string> ops;
  for (const auto& [op, s] : run) ops.insert(op);
  for (const auto& [op, s] : base) ops.insert(op);
  if (!ops.empty()) {
    h += "<h2>Bus bandwidth vs message size</h2>";
    // nccl-tests' closing line: the mean of busbw over the sizes measured.
    for (const auto& [op, se] : run) {
      double sum = 0;
      for (const auto& [bytes, gbs] : se.points) sum += gbs;
      h += fmt::format(
          "<p class=\"avg-busbw\"># {}: Avg bus bandwidth : {:.4f} GB/s (the mean of busbw p50 over "
          "{} sizes, as nccl-tests prints it)</p>",
          xml_escape(op), sum / static_cast<double>(se.points.size()), se.points.size());
    }
    // Each op twice: a linear y axis (the plateau to compare), then log10 (every size on one picture).
    h += "<div class=\"plots\">";
    for (const std::string& op : ops) {
      std::vector<Series> series;
      if (run.count(op)) series.push_back(run[op]);
      if (base.count(op)) series.push_back(base[op]);
      h += svg_busbw_plot(op, series, YScale::Linear);
      h += svg_busbw_plot(op + ", log scale", series, YScale::Log);
    }
    h += "</div>";
  }

  if (!r.sizes.empty()) {
    h +=
        "<h2>Per (op, size), in nccl-tests' terms</h2><p>size in bytes; count = elements per rank; time in "
        "µs, "
        "bandwidths in GB/s (10<sup>9</sup> B/s); p50 = median; time p99: 99 % of samples took at most this; "
        "busbw p1 / p99: 99 % of samples reached at least / at most this (percentiles by nearest rank over "
        "every rank's samples; the shaded band of the plots); redop “-”: NCCL's profiler events "
        "do not carry it.</p><table><tr><th class=\"l\">op</th><th>n</th><th>size</th><th>count</th>"
        "<th class=\"l\">type</th><th class=\"l\">redop</th><th>samples</th><th>ranks</th><th>time p50</th>"
        "<th>time p99</th><th>time min–max (rank medians)</th><th>algbw p50</th><th>busbw p50</th>"
        "<th>busbw p1</th><th>busbw p99</th><th>busbw min (rank)</th><th>busbw max (rank)</th>";
    if (r.has_baseline)
      h += fmt::format("<th>{} busbw p50</th><th>ratio {} / {}</th>", xml_escape(r.baseline_label),
                       xml_escape(r.run_label), xml_escape(r.baseline_label));
    h += "</tr>";
  }
  for (const SizeRow& s : r.sizes) {
    h += fmt::format(
        "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td "
        "class=\"l\">{}</td><td>{}</td><td>{}</td>",
        xml_escape(s.op), s.nranks > 0 ? fmt::format("{}{}", s.nranks, s.nranks_from_input ? "*" : "") : "?",
        s.bytes, s.count, xml_escape(s.dtype.empty() ? "-" : s.dtype),
        xml_escape(s.redop.empty() ? "-" : s.redop), s.records, s.ranks);
    h += fmt::format("<td>{:.1f}</td><td>{:.1f}</td><td>{:.1f}–{:.1f}</td>", s.time_p50_us, s.time_p99_us,
                     s.time_min_us, s.time_max_us);
    if (s.has_busbw)
      h += fmt::format(
          "<td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.2f} ({})</td><td>{:.2f} "
          "({})</td>",
          s.algbw_p50, s.busbw_p50, s.busbw_p1, s.busbw_p99, s.busbw_min, s.rank_min, s.busbw_max,
          s.rank_max);
    else
      h += fmt::format("<td>{:.2f}</td><td>—</td><td>—</td><td>—</td><td>—</td><td>—</td>", s.algbw_p50);
    if (r.has_baseline) {
      if (s.has_busbw && s.baseline_busbw_p50 && *s.baseline_busbw_p50 > 0)
        h += fmt::format("<td>{:.2f}</td><td>{:.2f}</td>", *s.baseline_busbw_p50,
                         s.busbw_p50 / *s.baseline_busbw_p50);
      else
        h += "<td>-</td><td>-</td>";
    }
    h += "</tr>";
  }
  if (!r.sizes.empty()) h += "</table>";

  if (!r.stragglers.empty()) {
    h += "<h2>Stragglers</h2>";
    if (!r.straggler_summary.empty()) h += fmt::format("<p><b>{}</b></p>", xml_escape(r.straggler_summary));
    h += "<table><tr><th>rank</th><th>times last</th><th>of ops</th><th>mean late µs</th><th>max late "
         "µs</th></tr>";
    for (const StragglerRow& s : r.stragglers)
      h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.1f}</td></tr>", s.rank,
                       s.times_last, s.ops, s.mean_late_us, s.max_late_us);
    h += "</table>";
  }
  if (r.heatmap.columns > 0) {
    std::vector<std::string> rows, cols;
    for (int rank : r.heatmap.ranks) rows.push_back(fmt::format("rank {}", rank));
    // Column c holds the collectives i with i·columns/n == c (analysis.cpp): 1-based numbers in tooltips.
    const size_t n = r.heatmap.collectives, ncols = r.heatmap.columns;
    std::vector<std::vector<std::string>> tips(r.heatmap.ranks.size());
    for (size_t c = 0; c < ncols; ++c) {
      const size_t first = (c * n + ncols - 1) / ncols, last = ((c + 1) * n + ncols - 1) / ncols;
      cols.push_back(fmt::format("{}", first + 1));
      for (size_t row = 0; row < tips.size(); ++row)
        tips[row].push_back(lateness_tooltip(r.heatmap.ranks[row], first + 1, last, n,
                                             c < r.heatmap.us[row].size() ? r.heatmap.us[row][c] : 0.0));
    }
    h += svg_heatmap("Arrival after the median rank, per collective (time order)", rows, cols, r.heatmap.us,
                     "µs", tips);
  }

  if (!r.waits.empty()) {
    h += "<h2>Rank × peer wait matrix</h2>";
    if (!r.wait_summary.empty()) h += fmt::format("<p><b>{}</b></p>", xml_escape(r.wait_summary));
    // At most 64 rows and columns: the ranks and peers with the most waiting (all of them in --json).
    std::map<int, double> by_rank, by_peer;
    for (const WaitCell& w : r.waits) by_rank[w.rank] += w.peer_wait_us, by_peer[w.peer] += w.peer_wait_us;
    auto top = [](const std::map<int, double>& m) {
      std::vector<std::pair<double, int>> v;
      for (const auto& [k, us] : m) v.emplace_back(-us, k);
      std::sort(v.begin(), v.end());
      std::set<int> out;
      for (size_t i = 0; i < v.size() && i < 64; ++i) out.insert(v[i].second);
      return out;
    };
    const std::set<int> ranks = top(by_rank), peers = top(by_peer);
    std::vector<std::string> rows, cols;
    std::map<int, size_t> ri, pi;
    for (int x : ranks) ri[x] = rows.size(), rows.push_back(fmt::format("rank {}", x));
    for (int x : peers) pi[x] = cols.size(), cols.push_back(fmt::format("{}", x));
    std::vector<std::vector<double>> v(rows.size(), std::vector<double>(cols.size(), 0.0));
    for (const WaitCell& w : r.waits)
      if (ranks.count(w.rank) && peers.count(w.peer)) v[ri[w.rank]][pi[w.peer]] = w.peer_wait_us / 1e3;
    h += svg_heatmap("Time waiting on each peer (columns: peer rank)", rows, cols, v, "ms");
  }

  h += render_fabric_html(r);
  if (!r.rail_rates.empty()) {
    h += "<h2>Rail rates</h2><p>Large sends (&ge; 64 KiB) per host and port over their busy time (net stats "
         "lines' rail_rate; MB/s = 10<sup>6</sup> bytes per second).</p><table><tr><th class=\"l\">host</th>"
         "<th class=\"l\">port</th><th>MB/s</th><th>sends</th><th>MiB</th><th>busy "
         "s</th><th>processes</th></tr>";
    for (const RailRateRow& p : r.rail_rates)
      h += fmt::format(
          "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.3f}</td><td>{}</td><td>{:.1f}</td>"
          "<td>{:.2f}</td><td>{}</td></tr>",
          xml_escape(p.host), xml_escape(p.port), p.mb_per_s(), p.sends, p.bytes / 1048576.0, p.busy_s,
          p.processes);
    h += "</table>";
  }
  if (!r.diags.empty())
    h += fmt::format(
        "<h2>Diagnoses ({})</h2><table><tr><th class=\"l\">id</th><th class=\"l\">severity</th><th>rank</th>"
        "<th class=\"l\">op / seq</th><th class=\"l\">detail</th><th class=\"l\">fix</th></tr>",
        r.diags.size());
  for (const DiagRow& d : r.diags)
    h += fmt::format(
        "<tr><td class=\"l\">{}</td><td class=\"l sev-{}\">{}</td><td>{}</td><td class=\"l\">{}</td><td "
        "class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
        xml_escape(d.id), xml_escape(d.severity), xml_escape(d.severity), d.rank,
        d.op.empty() ? std::string() : fmt::format("{} / {}", xml_escape(d.op), d.seq.value_or(0)),
        xml_escape(d.detail), xml_escape(d.fix));
  if (!r.diags.empty()) h += "</table>";
  h += fmt::format("<script>{}</script></body></html>\n", kCheckScript);
  return h;
}

}  // namespace railscope::report
