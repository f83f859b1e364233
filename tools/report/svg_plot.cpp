// SPDX-License-Identifier: Apache-2.0
#include "tools/report/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "railscope/core/html.h"
#include "tools/report/render.h"

namespace railscope::report {

std::string xml_escape(const std::string& s) { return core::html_escape(s); }

namespace {

// A point a log-log plot can place: both coordinates finite and positive (the axes' ticks are converted
// to int, so a non-finite bound would be undefined behaviour).
bool drawable(double x, double y) { return std::isfinite(x) && std::isfinite(y) && x > 0 && y > 0; }

// Where `v` lies between 0 and vmax, in [0, 1]; 0 for anything not finite or not positive.
double shade(double v, double vmax) {
  if (!std::isfinite(v) || !std::isfinite(vmax) || v <= 0 || vmax <= 0) return 0.0;
  return std::clamp(v / vmax, 0.0, 1.0);
}

}  // namespace

std::string svg_title(const std::string& title, double width) {
  const double room = width - 16;
  const double estimate = kTitleCharPx * static_cast<double>(title.size());
  return fmt::format("<text x=\"8\" y=\"18\" class=\"title\"{}>{}</text>",
                     estimate > room
                         ? fmt::format(" textLength=\"{:.0f}\" lengthAdjust=\"spacingAndGlyphs\"", room)
                         : std::string(),
                     xml_escape(title));
}

std::string svg_busbw_plot(const std::string& title, const std::vector<Series>& series, YScale y_scale) {
  // The legend sits in its own band under the x axis, never over the curves.
  constexpr double W = 640, H = 390, L = 70, R = 36, T = 30, B = 80;  // R: room for the last size label
  const bool log_y = y_scale == YScale::Log;
  auto yv = [&](double y) { return log_y ? std::log10(y) : y; };
  double xmin = 1e300, xmax = -1e300, ymin = 1e300, ymax = -1e300;
  for (const Series& s : series) {
    for (const auto& [x, y] : s.points) {
      if (!drawable(x, y)) continue;
      xmin = std::min(xmin, std::log2(x));
      xmax = std::max(xmax, std::log2(x));
      ymin = std::min(ymin, yv(y));
      ymax = std::max(ymax, yv(y));
    }
    // The band's edges widen the y range (its sizes are its line's: the x axis is the lines').
    for (const BandPoint& b : s.band) {
      if (drawable(b.bytes, b.high)) ymax = std::max(ymax, yv(b.high));
      if (drawable(b.bytes, b.low)) ymin = std::min(ymin, yv(b.low));
    }
  }
  std::string out = fmt::format(
      "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 "
      "{0} {1}\">{2}",
      W, H, svg_title(title, W));
  if (xmin > xmax) return out + "<text x=\"80\" y=\"80\">no timed records</text></svg>";
  if (xmax - xmin < 0.5) {  // one message size: centred, one power of two either side
    xmin -= 1;
    xmax += 1;
  }
  xmin = std::floor(xmin);
  xmax = std::ceil(xmax);
  double ystep = 1;  // between labelled y ticks: a decade (log), or 1, 2 or 5 × 10^k GB/s (linear)
  if (log_y) {
    ymin = std::floor(ymin);
    ymax = std::ceil(ymax);
    if (ymax - ymin < 1) ymax = ymin + 1;
  } else {
    ymin = 0;
    const double raw = std::max(ymax, 1e-9) / 5;
    const double decade = std::pow(10.0, std::floor(std::log10(raw)));
    ystep = raw <= decade       ? decade
            : raw <= 2 * decade ? 2 * decade
            : raw <= 5 * decade ? 5 * decade
                                : 10 * decade;
    ymax = std::ceil(ymax / ystep) * ystep;
  }
  auto px = [&](double lx) { return L + (lx - xmin) / (xmax - xmin) * (W - L - R); };
  auto py = [&](double ly) { return H - B - (ly - ymin) / (ymax - ymin) * (H - T - B); };
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>", L, T, W - L - R,
                     H - T - B);
  const int xstep = std::max(1, static_cast<int>(std::ceil((xmax - xmin) / 10.0)));
  for (int e = static_cast<int>(xmin); e <= static_cast<int>(xmax); e += xstep) {
    const double x = px(e);
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" class=\"grid\"/>", x, T,
                       H - B);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>", x,
                       H - B + 16, human_bytes(uint64_t{1} << std::clamp(e, 0, 62)));
  }
  const int yticks = static_cast<int>(std::lround((ymax - ymin) / ystep));
  for (int i = 0; i <= yticks; ++i) {
    const double v = ymin + ystep * i;
    const double y = py(v);
    out += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" class=\"grid\"/>", L, y,
                       W - R);
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{:g}</text>", L - 6,
                       y + 4, log_y ? std::pow(10.0, v) : v);
  }
  out += fmt::format(
      "<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">message size (bytes, log2)</text>",
      (L + W - R) / 2, H - B + 34);
  out += fmt::format(
      "<text x=\"16\" y=\"{0}\" class=\"axis\" text-anchor=\"middle\" transform=\"rotate(-90 16 {0})\">busbw "
      "GB/s{1}</text>",
      (T + H - B) / 2, log_y ? " (log10)" : "");
  int legend = 0;
  const auto legend_entry = [&](const std::string& css, const std::string& name, bool area) {
    // Two entries a row (a line and its band, run and baseline: two rows at most), each within half
    // the picture's width.
    const double lx = L + (W - L) / 2 * (legend % 2), ly = H - B + 56 + 16.0 * (legend / 2);
    ++legend;
    const std::string swatch =
        area ? fmt::format("<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"24\" height=\"8\" class=\"band {}\"/>",
                           lx, ly - 8, css)
             : fmt::format(
                   "<line x1=\"{0:.0f}\" y1=\"{1:.0f}\" x2=\"{2:.0f}\" y2=\"{1:.0f}\" class=\"swatch {3}\"/>",
                   lx, ly - 4, lx + 24, css);
    return swatch + fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" class=\"legend {}\">{}</text>", lx + 30, ly,
                                css, xml_escape(name));
  };
  std::vector<std::pair<std::string, std::string>> band_legends;  // listed after the lines'
  // Bands first, under every line: upper edge left to right, lower edge back. A low edge the log axis
  // cannot place (0 GB/s) sits on the axis.
  for (const Series& s : series) {
    std::vector<std::array<double, 3>> edge;  // x px, high px, low px
    for (const BandPoint& b : s.band)
      if (drawable(b.bytes, b.high))
        edge.push_back(
            {px(std::log2(b.bytes)), py(yv(b.high)), drawable(b.bytes, b.low) ? py(yv(b.low)) : py(ymin)});
    if (edge.empty()) continue;
    std::sort(edge.begin(), edge.end());
    if (edge.size() == 1) {  // one size: a bar a few pixels wide
      edge.push_back(edge[0]);
      edge[0][0] -= 4;
      edge[1][0] += 4;
    }
    std::string d;
    for (size_t i = 0; i < edge.size(); ++i)
      d += fmt::format("{}{:.1f} {:.1f} ", i ? "L" : "M", edge[i][0], edge[i][1]);
    for (size_t i = edge.size(); i-- > 0;) d += fmt::format("L{:.1f} {:.1f} ", edge[i][0], edge[i][2]);
    out += fmt::format("<path class=\"band {}\" d=\"{}Z\"><title>{}</title></path>", s.css_class, d,
                       xml_escape(s.band_name));
    band_legends.emplace_back(s.css_class, s.band_name);
  }
  for (const Series& s : series) {
    std::vector<std::pair<double, double>> pts;
    for (const auto& [x, y] : s.points)
      if (drawable(x, y)) pts.emplace_back(px(std::log2(x)), py(yv(y)));
    if (pts.empty()) continue;
    std::sort(pts.begin(), pts.end());
    std::string d;
    for (size_t i = 0; i < pts.size(); ++i)
      d += fmt::format("{}{:.1f} {:.1f} ", i ? "L" : "M", pts[i].first, pts[i].second);
    out += fmt::format("<path class=\"series {}\" d=\"{}\"/>", s.css_class, d);
    for (const auto& [x, y] : pts)
      out +=
          fmt::format("<circle class=\"point {}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\"/>", s.css_class, x, y);
    if (pts.size() == 1) {  // a lone point says its value
      double value = 0;
      for (const auto& [x, y] : s.points)
        if (drawable(x, y)) value = y;
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"tick value\">{:.3g} GB/s</text>",
                         pts[0].first + 6, pts[0].second - 6, value);
    }
    out += legend_entry(s.css_class, s.name, false);
  }
  for (const auto& [css, name] : band_legends) out += legend_entry(css, name, true);
  return out + "</svg>";
}

std::string svg_heatmap(const std::string& title, const std::vector<std::string>& row_labels,
                        const std::vector<std::string>& col_labels,
                        const std::vector<std::vector<double>>& values, const std::string& unit,
                        const std::vector<std::vector<std::string>>& tooltips) {
  const double cell_w = col_labels.size() > 30 ? 10 : 28, cell_h = 18, L = 80, T = 30;
  const double H = T + cell_h * static_cast<double>(row_labels.size()) + 40;
  double vmax = 0;
  for (const auto& row : values)
    for (double v : row)
      if (std::isfinite(v)) vmax = std::max(vmax, v);
  const std::string full_title = fmt::format("{} (max {:.1f} {})", title, vmax, unit);
  // Wide enough for its cells and for its title.
  const double W = std::max(L + cell_w * static_cast<double>(col_labels.size()) + 20,
                            std::min(kTitleCharPx * static_cast<double>(full_title.size()) + 16, 1200.0));
  std::string out = fmt::format(
      "<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 "
      "0 {0} "
      "{1}\">{2}",
      W, H, svg_title(full_title, W));
  for (size_t r = 0; r < row_labels.size(); ++r) {
    const double y = T + cell_h * static_cast<double>(r);
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{}</text>", L - 6,
                       y + 13, xml_escape(row_labels[r]));
    for (size_t c = 0; c < col_labels.size() && c < values[r].size(); ++c) {
      const double v = values[r][c];
      const int gb = static_cast<int>(255 - 200 * shade(v, vmax));
      const bool own = r < tooltips.size() && c < tooltips[r].size();
      out += fmt::format(
          "<rect class=\"cell\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" height=\"{}\" fill=\"rgb(255,{},{})\">"
          "<title>{}</title></rect>",
          L + cell_w * static_cast<double>(c), y, cell_w - 1, cell_h - 1, gb, gb,
          xml_escape(own ? tooltips[r][c]
                         : fmt::format("{} / {}: {:.1f} {}", row_labels[r], col_labels[c], v, unit)));
    }
  }
  if (col_labels.size() <= 30)
    for (size_t c = 0; c < col_labels.size(); ++c)
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
                         L + cell_w * (static_cast<double>(c) + 0.5),
                         T + cell_h * static_cast<double>(row_labels.size()) + 14, xml_escape(col_labels[c]));
  return out + "</svg>";
}

std::string lateness_tooltip(int rank, size_t first, size_t last, size_t total, double us) {
  const std::string which = first == last ? fmt::format("collective {} of {}", first, total)
                                          : fmt::format("collectives {}–{} of {}", first, last, total);
  const double a = std::fabs(us);
  const std::string when = a < 0.05   ? "with the median rank"
                           : us > 0.0 ? fmt::format("{:.1f} µs after the median rank", a)
                                      : fmt::format("{:.1f} µs before the median rank", a);
  return fmt::format("rank {}, {}: arrived {}{}", rank, which, when, first == last ? "" : " (mean)");
}

}  // namespace railscope::report
