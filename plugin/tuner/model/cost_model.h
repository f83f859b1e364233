// SPDX-License-Identifier: Apache-2.0
// The α-β cost model: for every (collective, algorithm, protocol) a latency α (µs), a bandwidth
// coefficient β (µs per byte of NCCL's nBytes) and a pipeline-fill term, compiled once per
// communicator from the topology and the figures, so that pricing a candidate on the hot path is a
// multiply-add. Measured figures for this node count replace the model's α/β for their entry.
//
//   time(S) = α · latency_count(numPipeOps) + β · S + min(S, chunk) · fill
//
// Ring: α = base + the hops of one chunk's journey (2·(n−1) for AllReduce, n−1 otherwise), those
//       crossing an island boundary at NIC latency, the rest at NVLink/PCIe latency; β = bus factor /
//       bus bandwidth, bus bandwidth = min(intra link, the NICs one node's ranks
//       drive × rate × η)
//       × protocol efficiency. Tree (AllReduce): depth up and down (intra chain + log2 islands),
//       tree efficiency, plus a fill term for the pipeline depth. PAT (AllGather/ReduceScatter, one
//       rank per island, Simple): log2(ranks) network steps. CollNet and NVLS have no model here:
//       NCCL's own estimate stands for them.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "plugin/tuner/model/figures.h"
#include "plugin/tuner/model/topology.h"
#include "plugin/tuner/model/types.h"

namespace railscope::tuner {

enum class CostSource : uint8_t { None, Model, Measured };
std::string_view to_string(CostSource s);

struct Coeffs {
  float alpha_us = 0;
  float beta_us_per_byte = 0;
  float fill_us_per_byte = 0;  // applies to min(S, fill_cap_bytes)
  float fill_cap_bytes = 0;
  bool latency_per_op = true;  // Ring pays α per pipelined op; Tree/PAT batch ops into one launch
  CostSource source = CostSource::None;
};

struct Terms {
  float latency_us = 0;
  float bandwidth_us = 0;  // β·S plus the pipeline fill
  float total() const { return latency_us + bandwidth_us; }
};

// Ops NCCL batches into one launch for non-ring algorithms.
inline constexpr int kOpsPerLaunch = 8;

inline Terms price(const Coeffs& c, uint64_t bytes, int pipe_ops) {
  const int ops = pipe_ops < 1 ? 1 : pipe_ops;
  const int count = c.latency_per_op ? ops : (ops + kOpsPerLaunch - 1) / kOpsPerLaunch;
  const float s = static_cast<float>(bytes);
  const float fill_bytes = s < c.fill_cap_bytes ? s : c.fill_cap_bytes;
  return {c.alpha_us * static_cast<float>(count), c.beta_us_per_byte * s + c.fill_us_per_byte * fill_bytes};
}

// A measured (latency, bus bandwidth) pair for one entry at one node count.
struct MeasuredFigure {
  int coll = 0, algo = 0, proto = 0;
  int nodes = 0;
  double lat_us = 0;
  double busbw_gbs = 0;
};

struct CostModel {
  Coeffs coeff[kNumColls][kNumAlgos][kNumProtos];
  bool inter_known = false;  // false: several islands and no NIC facts, so no model entries
  std::string note;          // why entries are missing, for the logs
  // The network bandwidth per rail the model priced, GB/s: the measured rate when it was given and is
  // not above the line rate, else the line rate × NIC efficiency. 0 when no NIC facts.
  double rail_gbs = 0;
  bool rail_measured = false;
};

// NCCL's bus factor: bytes each rank moves over its bottleneck link per byte of nBytes.
double bus_factor(int coll, int n_ranks);

// `measured_rail_gbs`: what one rail carries as measured (a calibration's rail_GBps), 0 = not measured.
CostModel build_cost_model(const Topology& topo, const Figures& figures,
                           std::span<const MeasuredFigure> measured, double measured_rail_gbs = 0);

}  // namespace railscope::tuner
