// SPDX-License-Identifier: Apache-2.0
// Measured bus bandwidths of one communicator's shape, from a calibration (`railscope tuner calibrate`):
// per (collective, algorithm, protocol) a curve over message sizes. A size between two measured sizes
// reads the bandwidth interpolated in log2(size); up to 2x beyond the smallest or largest measured size
// it holds that point's time (smaller) or bandwidth (larger); farther out there is no figure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plugin/tuner/config/config.h"
#include "plugin/tuner/model/topology.h"
#include "plugin/tuner/model/types.h"
#include "railscope/core/diagnosis.h"

namespace railscope::tuner {

struct MeasuredBusbw {
  float busbw_gbs = 0;   // GB/s
  float spread_gbs = 0;  // GB/s around it
};

struct CalibrationCurve {
  std::vector<uint64_t> bytes;  // ascending
  std::vector<MeasuredBusbw> at;
};

// How far a curve reaches beyond its measured sizes (a factor of the end sizes).
inline constexpr uint64_t kCalibrationReach = 2;

struct Calibration {
  bool active = false;
  std::string note;  // what applies ("12 points for 16 ranks on 2 nodes") or why nothing does
  CalibrationCurve curve[kNumColls][kNumAlgos][kNumProtos];
  bool any[kNumColls] = {};

  std::optional<MeasuredBusbw> at(int coll, int algo, int proto, uint64_t bytes) const;
};

struct CalibrationOrRefusal {
  Calibration calibration;
  // tuner.calibration_other_shape (no point for this communicator's shape) or
  // tuner.calibration_other_cluster (its NICs differ from this node's): nothing of it applies.
  std::optional<diag::Finding> refusal;
};

// How a calibration's cluster differs from the NICs this communicator sees ("NICs of 200 Gbit/s there,
// 400 Gbit/s here"); "" when they agree or the NICs here are unknown.
std::string cluster_difference(const ClusterPrint& cluster, const Topology& topo);

// The points of `config` for this communicator's shape, checked against the topology's NICs.
CalibrationOrRefusal build_calibration(const Config& config, const Topology& topo);

}  // namespace railscope::tuner
