// SPDX-License-Identifier: Apache-2.0
// The verdict's HTML page (see html_page.h).
#include "html_page.h"

#include "railscope/core/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace railscope::preflight {
namespace {

std::string esc(const std::string& s) { return core::html_escape(s); }

// Bins of the colour scale, from the best: at least `from` % of the basis.
struct Bin {
  double from;
  const char* colour;
  const char* label;
};
constexpr Bin kBins[] = {{90, "#1a9850", "≥ 90 %"},
                         {75, "#91cf60", "75–90 %"},
                         {60, "#fee08b", "60–75 %"},
                         {40, "#fc8d59", "40–60 %"},
                         {-1, "#d73027", "< 40 %"}};
constexpr const char* kNoBasis = "#b0b0b0";

const char* colour_for(double pct) {
  for (const Bin& b : kBins)
    if (pct >= b.from) return b.colour;
  return kBins[std::size(kBins) - 1].colour;
}

constexpr const char* kStyle = R"(
body{font-family:system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:8px 0 24px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}
.tick{font-size:11px;fill:#555}.title{font-size:14px;font-weight:600}.axis{font-size:12px;fill:#333}
rect.unmeasured{fill:#f4f4f4;stroke:#ddd}rect.cell.slow{stroke:#000;stroke-width:2}
rect.cell.failed{fill:#444}line.cross{stroke:#fff;stroke-width:1.5}.heatmaps svg{margin:0 24px 24px 0}
.sev-error{color:#b00}.sev-warning{color:#a60}.status-error{color:#b00}.status-warning{color:#a60}
.status-ok{color:#080}
)";

// Counts what the browser drew and any script error, on <body> and on each heat map, so that a headless
// browser's DOM dump shows both.
constexpr const char* kCheckScript = R"(
window.addEventListener('error', function(){ var b=document.body; b.dataset.jsErrors=String(Number(b.dataset.jsErrors||0)+1); });
window.addEventListener('load', function(){
  var maps=document.querySelectorAll('svg.rail-heatmap'), total=0;
  maps.forEach(function(svg){
    var n=0; svg.querySelectorAll('rect.cell').forEach(function(c){ var b=c.getBBox(); if(b.width>0&&b.height>0) n++; });
    svg.dataset.cellsDrawn=String(n); total+=n;
  });
  document.body.dataset.heatmapsDrawn=String(maps.length);
  document.body.dataset.cellsDrawn=String(total);
});
)";

// One rail's node × node matrix.
std::string heat_map(const Verdict& v, const RailStats& rs, const std::map<std::string, size_t>& index) {
  const size_t n = v.nodes.size();
  const bool labels = n <= 48;
  const double cell = std::clamp(std::floor(720.0 / static_cast<double>(std::max<size_t>(n, 1))), 1.0, 28.0);
  size_t longest = 0;
  if (labels)
    for (const auto& node : v.nodes) longest = std::max(longest, std::min<size_t>(node.host.size(), 20) + 6);
  const double L = labels ? 12 + 7.0 * static_cast<double>(longest) : 40, T = 48;
  const double side = cell * static_cast<double>(n);
  const double W = std::max(L + side + 20, 560.0), H = T + side + (labels ? 24 : 8) + 56;
  const std::string basis = heat_basis(v, rs.rail);
  const std::string title =
      basis.empty() ? fmt::format("Rail {}: {} link(s), nothing to compare with", rs.rail, rs.links)
                    : fmt::format("Rail {}: {} link(s), colour: % of {}", rs.rail, rs.links, basis);
  std::string out = fmt::format(
      "<svg class=\"rail-heatmap\" data-rail=\"{0}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{1}\" "
      "height=\"{2}\" viewBox=\"0 0 {1} {2}\"><text class=\"title\" x=\"4\" y=\"18\">{3}</text>"
      "<text class=\"axis\" x=\"4\" y=\"36\">row: sender, column: receiver; median {4} GB/s, line rate {5}"
      "</text><rect class=\"unmeasured\" x=\"{6}\" y=\"{7}\" width=\"{8}\" height=\"{8}\"/>",
      rs.rail, W, H, esc(title), gbps_text(rs.median_GBps),
      rs.line_GBps > 0 ? gbps_text(rs.line_GBps) + " GB/s" : "unknown", L, T, side);
  if (labels)
    for (size_t i = 0; i < n; ++i) {
      const double c = cell * (static_cast<double>(i) + 0.5);
      const std::string host = v.nodes[i].host.substr(0, 20);
      out += fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{} {}</text>",
                         L - 4, T + c + 4, v.nodes[i].rank, esc(host));
      out += fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>",
                         L + c, T + side + 14, v.nodes[i].rank);
    }
  const double gap = cell >= 4 ? 1 : 0;
  for (const auto& l : v.links) {
    if (l.rail != rs.rail) continue;
    const auto s = index.find(l.src_node), d = index.find(l.dst_node);
    if (s == index.end() || d == index.end()) continue;
    const double x = L + cell * static_cast<double>(d->second), y = T + cell * static_cast<double>(s->second);
    std::string tip = fmt::format("{}/{} → {}/{}", l.src_node, l.src_nic, l.dst_node, l.dst_nic);
    std::string cls = "cell";
    const char* fill = kNoBasis;
    if (!l.error.empty()) {
      cls += " failed";
      tip += ": failed: " + l.error;
    } else {
      const double line_pct = l.line_GBps > 0 ? 100 * l.GBps / l.line_GBps : -1;
      const double median_pct = rs.reference_GBps > 0 ? 100 * l.GBps / rs.reference_GBps : -1;
      const double pct = basis == "line rate" ? line_pct : basis.empty() ? -1 : median_pct;
      if (pct >= 0) fill = colour_for(pct);
      tip += fmt::format(": {} GB/s", gbps_text(l.GBps));
      if (line_pct >= 0) tip += fmt::format(", {:.0f} % of line rate", line_pct);
      if (median_pct >= 0) tip += fmt::format(", {:.0f} % of the rail's median", median_pct);
      if (l.lat_us > 0) tip += fmt::format(", latency {:.1f} µs", l.lat_us);
      if (l.slow) cls += " slow", tip += " (link.slow)";
      if (l.high_latency) tip += " (link.high_latency)";
    }
    out += fmt::format(
        "<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" height=\"{}\" "
        "fill=\"{}\"><title>{}</title>"
        "</rect>",
        cls, x, y, cell - gap, cell - gap, fill, esc(tip));
    if (!l.error.empty() && cell >= 6)
      out += fmt::format(
          "<line class=\"cross\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{3:.1f}\"/><line "
          "class=\"cross\" x1=\"{0:.1f}\" y1=\"{3:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\"/>",
          x + 2, y + 2, x + cell - gap - 2, y + cell - gap - 2);
  }
  // The legend: the colour bins, an outlier, a failed link, a pair not measured.
  double lx = 4;
  const double ly = T + side + (labels ? 24 : 8) + 14;
  for (const Bin& b : kBins) {
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\" fill=\"{}\"/><text class=\"tick\" "
        "x=\"{:.1f}\" y=\"{:.1f}\">{}</text>",
        lx, ly, b.colour, lx + 16, ly + 10, b.label);
    lx += 84;
  }
  out += fmt::format(
      "<rect x=\"4\" y=\"{0:.1f}\" width=\"12\" height=\"12\" fill=\"#fff\" stroke=\"#000\" "
      "stroke-width=\"2\"/><text class=\"tick\" x=\"20\" y=\"{1:.1f}\">outlier (link.slow)</text>"
      "<rect x=\"150\" y=\"{0:.1f}\" width=\"12\" height=\"12\" fill=\"#444\"/><text class=\"tick\" "
      "x=\"166\" "
      "y=\"{1:.1f}\">failed</text><rect x=\"230\" y=\"{0:.1f}\" width=\"12\" height=\"12\" fill=\"#f4f4f4\" "
      "stroke=\"#ddd\"/><text class=\"tick\" x=\"246\" y=\"{1:.1f}\">not measured</text>",
      ly + 20, ly + 30);
  return out + "</svg>";
}

}  // namespace

std::string heat_basis(const Verdict& v, int rail) {
  bool any = false, all_line = true;
  for (const auto& l : v.links) {
    if (l.rail != rail || !l.error.empty()) continue;
    any = true;
    all_line = all_line && l.line_GBps > 0;
  }
  if (!any) return "";
  if (all_line) return "line rate";
  for (const auto& r : v.rails)
    if (r.rail == rail && r.reference_GBps > 0) return "rail median";
  return "";
}

std::string render_html(const Verdict& v) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>railscope preflight</title>";
  h += fmt::format("<style>{}</style></head><body data-js-errors=\"0\">", kStyle);
  h += fmt::format(
      "<h1>railscope preflight</h1><p><b class=\"status-{0}\">Status: {0} (exit {1})</b> — {2} of {3} "
      "rank(s) joined ({4}), {5} finding(s).</p>",
      status_word(v.exit_code), v.exit_code, v.nodes.size(), v.world, esc(v.launcher), v.findings.size());

  std::map<std::string, size_t> index;  // host -> row/column (rank order)
  for (size_t i = 0; i < v.nodes.size(); ++i) index.emplace(v.nodes[i].host, i);
  if (v.links_measured) {
    h += "<h2>Links per rail</h2><p>Bandwidth of each measured link (hover a cell for its figures); the "
         "pairing schedule measures O(log N) rounds of pairs, <code>--full</code> every pair.</p>"
         "<div class=\"heatmaps\">";
    for (const auto& rs : v.rails) h += heat_map(v, rs, index);
    h += "</div><table><tr><th>rail</th><th>links</th><th>median GB/s</th><th>compared with</th>"
         "<th>line rate GB/s</th><th>median latency µs</th></tr>";
    for (const auto& r : v.rails)
      h += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{:.1f}</td></tr>",
          r.rail, r.links, gbps_text(r.median_GBps),
          r.reference.empty() ? "line rate only" : esc(r.reference) + " " + gbps_text(r.reference_GBps),
          r.line_GBps > 0 ? gbps_text(r.line_GBps) : "?", r.median_lat_us);
    h += "</table>";
  }

  h += fmt::format("<h2>Findings ({})</h2>", v.findings.size());
  if (!v.findings.empty()) {
    h += "<table class=\"findings\"><tr><th class=\"l\">severity</th><th class=\"l\">id</th>"
         "<th class=\"l\">detail</th><th class=\"l\">fix</th></tr>";
    for (const auto& f : v.findings) {
      const std::string sev(diag::to_string(f.severity));
      h += fmt::format(
          "<tr class=\"finding\"><td class=\"l sev-{0}\">{0}</td><td class=\"l\">{1}</td><td class=\"l\">{2}"
          "</td><td class=\"l\">{3}</td></tr>",
          sev, esc(std::string(f.id())), esc(f.detail), esc(std::string(f.effective_fix())));
    }
    h += "</table>";
  }

  h += "<h2>Nodes</h2><table><tr><th>rank</th><th class=\"l\">host</th><th class=\"l\">doctor</th>"
       "<th class=\"l\">rails</th></tr>";
  for (const auto& n : v.nodes) {
    std::string nics;
    for (const auto& c : n.nics)
      nics += fmt::format("{}{} {} MTU {}{}", nics.empty() ? "" : ", ", c.name(), c.state, c.active_mtu,
                          c.subnet.empty() ? "" : " " + c.subnet);
    h += fmt::format(
        "<tr><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>", n.rank,
        esc(n.host), status_word(n.doctor_exit), esc(nics));
  }
  for (int r : v.missing)
    h += fmt::format("<tr><td>{}</td><td class=\"l\">?</td><td class=\"l\">never joined</td><td></td></tr>",
                     r);
  h += "</table>";
  return h + fmt::format("<script>{}</script></body></html>\n", kCheckScript);
}

}  // namespace railscope::preflight
