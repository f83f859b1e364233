// SPDX-License-Identifier: Apache-2.0
// The cost table NCCL would hand the tuner, simulated for `railscope tuner explain`, the tests and the
// benchmark where no NCCL runs: Ring for every collective, Tree for AllReduce, PAT/Simple for
// AllGather/ReduceScatter with one rank per node; CollNet and NVLS unsupported (no such hardware
// known offline); entries NCCL_ALGO/NCCL_PROTO disable are -1, as NCCL leaves them.
#pragma once

#include "plugin/tuner/config/nccl_env.h"
#include "plugin/tuner/model/topology.h"
#include "plugin/tuner/model/types.h"

namespace railscope::tuner {

// Supported entries get `estimate` (NCCL's own cost, unknown offline), the rest -1.
void simulated_nccl_table(const Topology& topo, int coll, float estimate,
                          float (&table)[kNumAlgos][kNumProtos],
                          const std::array<uint32_t, kNumColls>* algo_enabled = nullptr,
                          const std::array<uint32_t, kNumColls>* proto_enabled = nullptr);

}  // namespace railscope::tuner
