// SPDX-License-Identifier: Apache-2.0
#include "plugin/tuner/explain/simulated_table.h"

namespace railscope::tuner {

void simulated_nccl_table(const Topology& topo, int coll, float estimate,
                          float (&table)[kNumAlgos][kNumProtos],
                          const std::array<uint32_t, kNumColls>* algo_enabled,
                          const std::array<uint32_t, kNumColls>* proto_enabled) {
  for (auto& row : table)
    for (float& v : row) v = -1.0f;
  if (coll < 0 || coll >= kNumColls) return;
  const auto c = static_cast<size_t>(coll);
  auto on = [&](int a, int p) {
    if (algo_enabled != nullptr && !((*algo_enabled)[c] >> a & 1u)) return;
    if (proto_enabled != nullptr && !((*proto_enabled)[c] >> p & 1u)) return;
    table[a][p] = estimate;
  };
  for (int p = 0; p < kNumProtos; ++p) on(kRing, p);
  if (coll == kAllReduce)
    for (int p = 0; p < kNumProtos; ++p) on(kTree, p);
  if ((coll == kAllGather || coll == kReduceScatter) && topo.shape.n_nodes == topo.shape.n_ranks)
    on(kPat, kSimple);
}

}  // namespace railscope::tuner
