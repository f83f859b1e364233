// SPDX-License-Identifier: Apache-2.0
// The fabric time line of `railscope report --html`: busbw per collective above, fabric windows below,
// on one time axis, so a drop in busbw can be read against the loss, pause or congestion of the moment.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tools/report/svg_plot.h"

namespace railscope::report {

std::string svg_fabric_timeline(const std::vector<std::pair<double, double>>& busbw,
                                const std::vector<TimelineWindow>& windows) {
  constexpr double W = 900, H = 330, L = 70, R = 20, T = 40, kBusbwH = 170, kGap = 20, kFabricH = 60;
  double tmax = 0, ymax = 0;
  uint64_t worst = 0;
  for (const auto& [t, y] : busbw)
    if (std::isfinite(t) && std::isfinite(y)) tmax = std::max(tmax, t), ymax = std::max(ymax, y);
  for (const TimelineWindow& w : windows)
    if (std::isfinite(w.t1_s)) tmax = std::max(tmax, w.t1_s), worst = std::max(worst, w.trouble);
  if (tmax <= 0) tmax = 1;
  if (ymax <= 0) ymax = 1;
  auto px = [&](double t) { return L + std::clamp(t / tmax, 0.0, 1.0) * (W - L - R); };
  auto py = [&](double y) { return T + kBusbwH - std::clamp(y / ymax, 0.0, 1.0) * kBusbwH; };
  const double fabric_top = T + kBusbwH + kGap, fabric_bottom = fabric_top + kFabricH;
  std::string out = fmt::format(
      "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\">{2}",
      W, H,
      svg_title(
          "busbw per collective (top); fabric per reporting window (bottom, red: loss, congestion, pause, "
          "link errors, discards)",
          W));
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>", L, T, W - L - R,
                     kBusbwH);
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>", L, fabric_top,
                     W - L - R, kFabricH);
  for (int i = 0; i <= 4; ++i) {
    const double y = ymax * i / 4.0;
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{:.3g}</text>", L - 6,
                       py(y) + 4, y);
  }
  for (int i = 0; i <= 5; ++i) {
    const double t = tmax * i / 5.0;
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{:.3g}</text>",
                       px(t), fabric_bottom + 16, t);
  }
  out += fmt::format(
      "<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">time (s since the first "
      "record)</text>",
      (L + W - R) / 2, fabric_bottom + 34);
  out += fmt::format(
      "<text x=\"16\" y=\"{0}\" class=\"axis\" text-anchor=\"middle\" transform=\"rotate(-90 16 {0})\">busbw "
      "GB/s</text>",
      T + kBusbwH / 2);
  for (const auto& [t, y] : busbw)
    if (std::isfinite(t) && std::isfinite(y))
      out += fmt::format("<circle class=\"busbw\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2\"/>", px(t), py(y));
  for (const TimelineWindow& w : windows) {
    if (!std::isfinite(w.t0_s) || !std::isfinite(w.t1_s)) continue;
    const double x0 = px(w.t0_s), x1 = std::max(px(w.t1_s), x0 + 2);
    double h = 3;
    if (w.trouble > 0)
      h = std::max(6.0, kFabricH * std::log1p(static_cast<double>(w.trouble)) /
                            std::log1p(static_cast<double>(std::max<uint64_t>(worst, 1))));
    out += fmt::format(
        "<rect class=\"window {}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
        "height=\"{:.1f}\"><title>{}</title>"
        "</rect>",
        w.trouble > 0 ? "trouble" : "clean", x0, fabric_bottom - h, x1 - x0 - 1, h, xml_escape(w.label));
  }
  return out + "</svg>";
}

}  // namespace railscope::report
