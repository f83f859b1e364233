#include <fmt/format.h>

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
.legend.run{fill:#1f77b4}.legend.baseline{fill:#d62728}.plots svg{margin:0 16px 16px 0}
.sev-error{color:#b00}.sev-warning{color:#a60}
)";

// Runs after load: counts what was drawn and records any script error on <body>, so a headless
// browser's DOM dump shows both.
constexpr const char* kCheckScript = R"(
window.addEventListener('error', function(){ var b=document.body; b.dataset.jsErrors=String(Number(b.dataset.jsErrors||0)+1); });
window.addEventListener('load', function(){
  var drawn=0; document.querySelectorAll('svg.plot path.series').forEach(function(p){ if(p.getTotalLength()>0||p.getAttribute('d').length>2) drawn++; });
  document.body.dataset.plotsDrawn=String(drawn);
  document.body.dataset.heatmapCells=String(document.querySelectorAll('svg.heatmap rect.cell').length);
});
)";

}  // namespace

std::string render_html(const Report& r) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>railscope report</title>";
  h += fmt::format("<style>{}</style></head><body data-js-errors=\"0\">", kStyle);
  h += "<h1>railscope report</h1>";
  h += fmt::format("<p>{} files from {} hosts, {} records ({} incomplete), {} events dropped{}.</p>", r.files,
                   r.hosts, r.records, r.incomplete, r.dropped_events,
                   r.has_baseline ? "; dashed red lines: baseline run" : "");
  for (const std::string& p : r.problems)
    h += fmt::format("<p class=\"sev-warning\">warning: {}</p>", xml_escape(p));

  // Plots: busbw vs size per op, baseline overlaid.
  std::map<std::string, Series> run, base;
  auto plot_key = [](const SizeRow& s) {
    return s.nranks > 0 ? fmt::format("{} (n = {})", s.op, s.nranks) : s.op;
  };
  for (const SizeRow& s : r.sizes) {
    Series& se = run[plot_key(s)];
    se.name = "this run (p50)";
    se.css_class = "run";
    se.points.emplace_back(static_cast<double>(s.bytes), s.busbw_p50);
  }
  for (const SizeRow& s : r.baseline_sizes) {
    Series& se = base[plot_key(s)];
    se.name = "baseline (p50)";
    se.css_class = "baseline";
    se.points.emplace_back(static_cast<double>(s.bytes), s.busbw_p50);
  }
  std::set<std::string> ops;
  for (const auto& [op, s] : run) ops.insert(op);
  for (const auto& [op, s] : base) ops.insert(op);
  h += "<h2>Bus bandwidth vs message size</h2><div class=\"plots\">";
  for (const std::string& op : ops) {
    std::vector<Series> series;
    if (run.count(op)) series.push_back(run[op]);
    if (base.count(op)) series.push_back(base[op]);
    h += svg_loglog_plot(op, series);
  }
  h += "</div>";

  h += "<h2>Per (op, size)</h2><table><tr><th "
       "class=\"l\">op</th><th>n</th><th>size</th><th>count</th><th>ranks</th>"
       "<th>time p50 µs</th><th>time p99 µs</th><th>busbw p50</th><th>busbw p99</th><th>min (rank)</th>"
       "<th>max (rank)</th>";
  if (r.has_baseline) h += "<th>baseline p50</th><th>ratio</th>";
  h += "</tr>";
  for (const SizeRow& s : r.sizes) {
    h += fmt::format(
        "<tr><td "
        "class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}<td>{:.1f}</td><td>{:.2f}</"
        "td>"
        "<td>{:.2f}</td><td>{:.2f} ({})</td><td>{:.2f} ({})</td>",
        xml_escape(s.op), s.nranks, human_bytes(s.bytes), s.records, s.ranks, s.time_p50_us, s.time_p99_us,
        s.busbw_p50, s.busbw_p99, s.busbw_min, s.rank_min, s.busbw_max, s.rank_max);
    if (r.has_baseline) {
      if (s.baseline_busbw_p50 && *s.baseline_busbw_p50 > 0)
        h += fmt::format("<td>{:.2f}</td><td>{:.2f}</td>", *s.baseline_busbw_p50,
                         s.busbw_p50 / *s.baseline_busbw_p50);
      else
        h += "<td>-</td><td>-</td>";
    }
    h += "</tr>";
  }
  h += "</table>";

  h += "<h2>Stragglers</h2>";
  if (!r.straggler_summary.empty()) h += fmt::format("<p><b>{}</b></p>", xml_escape(r.straggler_summary));
  h += "<table><tr><th>rank</th><th>times last</th><th>of ops</th><th>mean late µs</th><th>max late "
       "µs</th></tr>";
  for (const StragglerRow& s : r.stragglers)
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.1f}</td></tr>", s.rank,
                     s.times_last, s.ops, s.mean_late_us, s.max_late_us);
  h += "</table>";
  if (r.heatmap.columns > 0) {
    std::vector<std::string> rows, cols;
    for (int rank : r.heatmap.ranks) rows.push_back(fmt::format("rank {}", rank));
    for (size_t c = 0; c < r.heatmap.columns; ++c) cols.push_back(fmt::format("{}", c));
    h += svg_heatmap("Arrival after the median rank, per collective (time order)", rows, cols, r.heatmap.us,
                     "µs");
  }

  h += "<h2>Rank × peer wait matrix</h2>";
  if (!r.wait_summary.empty()) h += fmt::format("<p><b>{}</b></p>", xml_escape(r.wait_summary));
  if (!r.waits.empty()) {
    std::set<int> ranks, peers;
    for (const WaitCell& w : r.waits) ranks.insert(w.rank), peers.insert(w.peer);
    std::vector<std::string> rows, cols;
    std::map<int, size_t> ri, pi;
    for (int x : ranks) ri[x] = rows.size(), rows.push_back(fmt::format("rank {}", x));
    for (int x : peers) pi[x] = cols.size(), cols.push_back(fmt::format("{}", x));
    std::vector<std::vector<double>> v(rows.size(), std::vector<double>(cols.size(), 0.0));
    for (const WaitCell& w : r.waits) v[ri[w.rank]][pi[w.peer]] = w.peer_wait_us / 1e3;
    h += svg_heatmap("Time waiting on each peer (columns: peer rank)", rows, cols, v, "ms");
  }

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
  h += "</table>";
  h += fmt::format("<script>{}</script></body></html>\n", kCheckScript);
  return h;
}

}  // namespace railscope::report
