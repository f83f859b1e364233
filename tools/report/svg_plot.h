// SPDX-License-Identifier: Apache-2.0
// Inline SVG: a log–log line plot (busbw vs message size, optional baseline overlay) and a heatmap.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace railscope::report {

std::string xml_escape(const std::string& s);

// A generous width of one character of a title (14 px, semibold, proportional font), in px.
inline constexpr double kTitleCharPx = 9.0;
// The title from the left edge, squeezed to the picture's width when it would not fit, so it is never
// clipped.
std::string svg_title(const std::string& title, double width);

// The spread of the samples at one size: drawn as a shaded band from `low` to `high` behind the line.
struct BandPoint {
  double bytes = 0;
  double low = 0, high = 0;  // GB/s, e.g. busbw p1 and p99
};

struct Series {
  std::string name;
  std::string css_class;                          // "run" or "baseline"
  std::vector<std::pair<double, double>> points;  // (bytes, GB/s), both > 0
  std::vector<BandPoint> band;                    // empty: no band
  std::string band_name;                          // its legend entry ("busbw p1–p99")
};

// x: log2 of bytes; y: GB/s from 0 (Linear: the plateau users compare, as nccl-tests' figures read) or
// log10 of GB/s (Log: small and large messages on one picture). A series' band is drawn first, as
// `path.band`, so its line lies over it; the y axis takes in the band's top.
enum class YScale { Linear, Log };
std::string svg_busbw_plot(const std::string& title, const std::vector<Series>& series, YScale y_scale);
inline std::string svg_loglog_plot(const std::string& title, const std::vector<Series>& series) {
  return svg_busbw_plot(title, series, YScale::Log);
}

// Rows × columns of values; colour from white (0 or less) to red (the maximum). Each cell's tooltip is
// "<row> / <column>: <value> <unit>", or tooltips[row][column] where given.
std::string svg_heatmap(const std::string& title, const std::vector<std::string>& row_labels,
                        const std::vector<std::string>& col_labels,
                        const std::vector<std::vector<double>>& values, const std::string& unit,
                        const std::vector<std::vector<std::string>>& tooltips = {});

// The straggler map's tooltip of one cell: which collectives (1-based, in time order) the column holds,
// and the rank's mean arrival against the median rank, in µs, "after" or "before" it.
std::string lateness_tooltip(int rank, size_t first, size_t last, size_t total, double us);

// One fabric reporting window on the time line: seconds since the time line's origin, how many
// loss/congestion/pause/link/discard counts (and ports not ACTIVE) it had, and a tooltip.
struct TimelineWindow {
  double t0_s = 0, t1_s = 0;
  uint64_t trouble = 0;
  std::string label;
};

// busbw of each collective in time (points, upper band) over the fabric windows (bars, lower band: red
// with a height by trouble, a thin green bar when clean). `busbw`: (seconds, GB/s).
std::string svg_fabric_timeline(const std::vector<std::pair<double, double>>& busbw,
                                const std::vector<TimelineWindow>& windows);

}  // namespace railscope::report
