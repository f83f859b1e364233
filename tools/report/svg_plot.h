// Inline SVG: a log–log line plot (busbw vs message size, optional baseline overlay) and a heatmap.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace railscope::report {

std::string xml_escape(const std::string& s);

struct Series {
  std::string name;
  std::string css_class;                          // "run" or "baseline"
  std::vector<std::pair<double, double>> points;  // (bytes, GB/s), both > 0
};

// x: log2 of bytes, y: log10 of GB/s.
std::string svg_loglog_plot(const std::string& title, const std::vector<Series>& series);

// Rows × columns of values; colour from white (0 or less) to red (the maximum).
std::string svg_heatmap(const std::string& title, const std::vector<std::string>& row_labels,
                        const std::vector<std::string>& col_labels,
                        const std::vector<std::vector<double>>& values, const std::string& unit);

}  // namespace railscope::report
