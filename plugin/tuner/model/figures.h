// SPDX-License-Identifier: Apache-2.0
// The α/β figures the cost model is built from: per-step hop latencies by link and algorithm/protocol,
// launch (base) latencies, and efficiencies of each protocol and algorithm. "Standard" figures are the
// values NCCL 2.28 ships as its defaults; with tuner ABI v5+ NCCL hands its own (possibly site-edited)
// constants to init and the latencies are taken from them instead.
#pragma once

#include <string>

#include "plugin/tuner/model/types.h"
#include "railscope/nccl/tuner.h"

namespace railscope::tuner {

enum HwLink : int { kHwNvlink = 0, kHwPci = 1, kHwNet = 2 };

struct Figures {
  double base_lat_us[kNumAlgos][kNumProtos] = {};          // paid once per launch
  double hw_lat_us[3][kNumAlgos][kNumProtos] = {};         // paid per step, by link of the slowest hop
  double proto_eff[kNumProtos] = {0.5, 0.9375, 1.0};       // LL: half the bandwidth; LL128: 120/128
  double tree_eff = 0.80;                                  // double binary tree vs ring (busbw ratio)
  double pat_eff = 0.75;                                   // PAT vs ring
  double nic_eff = 0.95;                                   // achievable fraction of NIC line rate
  double chunk_bytes[kNumProtos] = {8192, 65536, 131072};  // pipeline chunk (tree fill term)
  std::string source = "standard";
};

Figures standard_figures();
// Standard efficiencies with the latencies NCCL passed to init (v5+).
Figures figures_from_nccl(const ncclTunerConstants_v5_t& constants);

}  // namespace railscope::tuner
