// SPDX-License-Identifier: Apache-2.0
#include "calibration_verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "plugin/tuner/model/spread_rule.h"
#include "railscope/cli/json_figure.h"
#include "tools/ab/ascii_lower.h"

namespace railscope::ab {
namespace {

std::map<OpKey, CalibrationSide> sides_of(const std::vector<RunSamples>& runs) {
  std::map<OpKey, report::CollectiveBusbw> busbw;
  std::map<OpKey, std::map<std::string, std::size_t>> choices;
  for (const RunSamples& run : runs)
    for (const OpSample& s : run.samples) {
      const OpKey key{s.op, s.bytes};
      // A run's communicators are its own: the same handle in another run is another collective.
      busbw[key].add({run.folder + "\n" + s.comm, s.ordinal}, s.busbw_gbps);
      if (!s.algo.empty() && !s.proto.empty())
        ++choices[key][ascii_lower(s.algo) + "/" + ascii_lower(s.proto)];
    }
  std::map<OpKey, CalibrationSide> out;
  for (const auto& [key, b] : busbw) {
    CalibrationSide& side = out[key];
    side.busbw = b.summary();
    const auto& c = choices[key];
    const auto top =
        std::max_element(c.begin(), c.end(), [](auto& x, auto& y) { return x.second < y.second; });
    if (top != c.end()) side.choice = top->first;
  }
  return out;
}

}  // namespace

std::string_view to_string(CalibrationVerdict v) {
  switch (v) {
    case CalibrationVerdict::Won: return "won";
    case CalibrationVerdict::Lost: return "lost";
    case CalibrationVerdict::WithinSpread: return "within_spread";
    case CalibrationVerdict::SameChoice: return "same_choice";
  }
  return "?";
}

std::vector<CalibrationRow> judge_calibration(const std::vector<RunSamples>& calibrated,
                                              const std::vector<RunSamples>& uncalibrated) {
  const auto cal = sides_of(calibrated);
  const auto uncal = sides_of(uncalibrated);
  std::vector<CalibrationRow> rows;
  for (const auto& [key, c] : cal) {
    const auto u = uncal.find(key);
    if (u == uncal.end()) continue;
    CalibrationRow row;
    row.key = key;
    row.calibrated = c;
    row.uncalibrated = u->second;
    const double cm = c.busbw.median_gbs, cs = c.busbw.spread_gbs;
    const double um = u->second.busbw.median_gbs, us = u->second.busbw.spread_gbs;
    row.ratio = um > 0 ? cm / um : 0;
    row.ratio_low = std::max(0.0, cm - cs) / (um + us > 0 ? um + us : 1);
    if (um - us > 0) row.ratio_high = (cm + cs) / (um - us);
    row.gain_gbs = cm - um;
    if (!c.choice.empty() && c.choice == u->second.choice)
      row.verdict = CalibrationVerdict::SameChoice;
    else if (tuner::faster_beyond_spreads(cm, cs, um, us))
      row.verdict = CalibrationVerdict::Won;
    else if (tuner::faster_beyond_spreads(um, us, cm, cs))
      row.verdict = CalibrationVerdict::Lost;
    rows.push_back(row);
  }
  return rows;
}

std::string format_calibration_table(const std::vector<CalibrationRow>& rows) {
  std::string out =
      "\nCalibration: calibrated vs uncalibrated tuner, busbw median ± spread over collectives (each its "
      "slowest rank);\na win or a loss only beyond both spreads\n";
  out += fmt::format("{:<14} {:>9} | {:>24} | {:>24} | {:>22} | {}\n", "op", "size", "calibrated GB/s",
                     "uncalibrated GB/s", "ratio [interval]", "verdict");
  out += std::string(120, '-') + "\n";
  for (const CalibrationRow& r : rows) {
    auto side = [](const CalibrationSide& s) {
      return fmt::format("{} {:.2f}±{:.2f}", s.choice.empty() ? "?" : s.choice, s.busbw.median_gbs,
                         s.busbw.spread_gbs);
    };
    const std::string interval =
        fmt::format("x{:.2f} [{:.2f}, {}]", r.ratio, r.ratio_low,
                    r.ratio_high ? fmt::format("{:.2f}", *r.ratio_high) : std::string("inf"));
    std::string verdict(to_string(r.verdict));
    if (r.verdict == CalibrationVerdict::Won || r.verdict == CalibrationVerdict::Lost)
      verdict += fmt::format(" ({:+.2f} GB/s)", r.gain_gbs);
    out +=
        fmt::format("{:<14} {:>9} | {:>24} | {:>24} | {:>22} | {}\n", r.key.first, format_size(r.key.second),
                    side(r.calibrated), side(r.uncalibrated), interval, verdict);
  }
  return out;
}

nlohmann::json calibration_json(const std::string& file, const std::vector<CalibrationRow>& rows) {
  auto side = [](const CalibrationSide& s) {
    return nlohmann::json{{"choice", s.choice.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.choice)},
                          {"collectives", s.busbw.collectives},
                          {"busbw_median_gbs", cli::json_figure(s.busbw.median_gbs)},
                          {"spread_gbs", cli::json_figure(s.busbw.spread_gbs)}};
  };
  nlohmann::json list = nlohmann::json::array();
  for (const CalibrationRow& r : rows)
    list.push_back({{"op", r.key.first},
                    {"bytes", r.key.second},
                    {"calibrated", side(r.calibrated)},
                    {"uncalibrated", side(r.uncalibrated)},
                    {"ratio", cli::json_figure(r.ratio)},
                    {"ratio_low", cli::json_figure(r.ratio_low)},
                    {"ratio_high", r.ratio_high ? nlohmann::json(cli::json_figure(*r.ratio_high))
                                                : nlohmann::json(nullptr)},
                    {"gain_gbs", cli::json_figure(r.gain_gbs)},
                    {"verdict", to_string(r.verdict)}});
  return {{"file", file}, {"rows", list}};
}

}  // namespace railscope::ab
