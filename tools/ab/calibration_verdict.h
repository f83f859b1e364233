// SPDX-License-Identifier: Apache-2.0
// `railscope ab --calibration`: per (op, size), did the calibrated tuner's choice beat the uncalibrated
// one? Each side's bus bandwidth is measured as the calibration measures it (each collective once, as its
// slowest rank; the median and half the interquartile range over collectives, tools/report/
// collective_busbw.h), and a win or a loss is claimed only beyond both spreads, the rule the calibrated
// tuner itself follows (plugin/tuner/model/spread_rule.h).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "ab_compare.h"
#include "tools/report/collective_busbw.h"

namespace railscope::ab {

struct CalibrationSide {
  report::BusbwSpread busbw;
  std::string choice;  // the algorithm/protocol most of its records ran with ("tree/ll128"; "" unknown)
};

enum class CalibrationVerdict {
  Won,           // calibrated faster beyond both spreads
  Lost,          // calibrated slower beyond both spreads
  WithinSpread,  // no claim: the difference is inside the noise
  SameChoice,    // both ran the same algorithm and protocol: nothing of the calibration to judge
};

struct CalibrationRow {
  OpKey key;
  CalibrationSide calibrated, uncalibrated;
  double ratio = 0;  // calibrated median / uncalibrated median
  // The ratio's interval over both spreads: (c - sc) / (u + su) .. (c + sc) / (u - su); above 1 at its
  // low end is a win, below 1 at its high end a loss. nullopt where u - su is not above 0.
  double ratio_low = 0;
  std::optional<double> ratio_high;
  double gain_gbs = 0;  // calibrated median - uncalibrated median
  CalibrationVerdict verdict = CalibrationVerdict::WithinSpread;
};

std::string_view to_string(CalibrationVerdict v);  // "won", "lost", "within_spread", "same_choice"

// One row per (op, size) both sides measured, in the comparison's order.
std::vector<CalibrationRow> judge_calibration(const std::vector<RunSamples>& calibrated,
                                              const std::vector<RunSamples>& uncalibrated);

std::string format_calibration_table(const std::vector<CalibrationRow>& rows);
nlohmann::json calibration_json(const std::string& file, const std::vector<CalibrationRow>& rows);

}  // namespace railscope::ab
