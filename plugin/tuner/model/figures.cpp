// SPDX-License-Identifier: Apache-2.0
#include "plugin/tuner/model/figures.h"

#include <cmath>

namespace railscope::tuner {
namespace {
bool usable(double v) { return std::isfinite(v) && v >= 0 && v < 1e6; }
}  // namespace

Figures standard_figures() {
  Figures f;
  // Launch latency, µs: Tree, Ring, PAT (the others have no model here).
  const double base[kNumAlgos][kNumProtos] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0},      {0, 0, 0},
                                              {0, 0, 0},        {0, 0, 0},        {8.0, 8.0, 8.0}};
  // Per-step latency, µs, by link: NVLink, PCIe, network.
  const double nvlink[kNumAlgos][kNumProtos] = {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8},
                                                {0, 0, 25},       {0, 0, 25},      {0, 0, 4.0}};
  const double pci[kNumAlgos][kNumProtos] = {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8},
                                             {0, 0, 0},       {0, 0, 0},       {0, 0, 4.0}};
  const double net[kNumAlgos][kNumProtos] = {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}, {0, 0, 31},  {0, 0, 30},
                                             {0, 0, 18},       {0, 0, 20.9},     {0, 0, 14.0}};
  for (int a = 0; a < kNumAlgos; ++a)
    for (int p = 0; p < kNumProtos; ++p) {
      f.base_lat_us[a][p] = base[a][p];
      f.hw_lat_us[kHwNvlink][a][p] = nvlink[a][p];
      f.hw_lat_us[kHwPci][a][p] = pci[a][p];
      f.hw_lat_us[kHwNet][a][p] = net[a][p];
    }
  return f;
}

Figures figures_from_nccl(const ncclTunerConstants_v5_t& c) {
  Figures f = standard_figures();
  for (int a = 0; a < kNumAlgos; ++a)
    for (int p = 0; p < kNumProtos; ++p) {
      // A negative or non-finite constant is not a latency: keep the standard figure for it.
      if (usable(c.baseLatencies[a][p])) f.base_lat_us[a][p] = c.baseLatencies[a][p];
      for (int h = 0; h < 3; ++h)
        if (usable(c.hwLatencies[h][a][p])) f.hw_lat_us[h][a][p] = c.hwLatencies[h][a][p];
    }
  f.source = "nccl-constants";
  return f;
}

}  // namespace railscope::tuner
