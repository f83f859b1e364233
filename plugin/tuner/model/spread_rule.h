// SPDX-License-Identifier: Apache-2.0
// When one measured bus bandwidth beats another: only when the difference is beyond both measurements'
// spreads (each a median with half its interquartile range around it). The calibrated tuner overrides
// NCCL's choice by this rule, and `railscope ab --calibration` judges a calibrated run by it, so a
// measurement never claims what its own noise could explain.
#pragma once

namespace railscope::tuner {

inline bool faster_beyond_spreads(double busbw, double spread, double other_busbw, double other_spread) {
  return busbw - spread > other_busbw + other_spread;
}

}  // namespace railscope::tuner
