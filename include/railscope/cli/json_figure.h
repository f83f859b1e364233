// SPDX-License-Identifier: Apache-2.0
// A measured or modelled figure as JSON prints it: six significant digits, as nccl-tests and perftest
// print theirs. A float widened to double (the tuner's costs) would otherwise print its binary noise
// (25.200000762939453), and a division its last bits; the shortest form of the rounded value is what
// nlohmann::json then writes (25.2).
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace railscope::cli {

inline double json_figure(double v) {
  if (!std::isfinite(v) || v == 0) return v;
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return std::strtod(text, nullptr);
}

}  // namespace railscope::cli
