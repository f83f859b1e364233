// SPDX-License-Identifier: Apache-2.0
// Topologies and engines the tuner unit tests share.
#pragma once

#include "plugin/tuner/engine.h"
#include "plugin/tuner/explain/simulated_table.h"

namespace railscope::tuner::test {

// `nodes` × `gpus` H100-class nodes with `nics` rails of `gbps`, standard figures, no config file.
inline EngineInputs inputs(int nodes, int gpus, int nics, double gbps) {
  EngineInputs in;
  in.shape.n_nodes = nodes;
  in.shape.n_ranks = nodes * gpus;
  in.overrides.nic_source = "test";
  if (nics > 0) in.overrides.nics = nics;
  if (gbps > 0) in.overrides.nic_gbps = gbps;
  in.config_path = "";
  in.strict = true;
  in.discovered = NicFacts{};
  in.log_decisions = false;
  return in;
}

inline std::unique_ptr<Engine> engine(const EngineInputs& in) {
  EngineOrError made = Engine::create(in);
  return std::move(made.engine);
}

// The table NCCL would pass for this engine's topology (every simulated entry supported).
struct Table {
  float t[kNumAlgos][kNumProtos];
  Table(const Engine& e, int coll) { simulated_nccl_table(e.topology(), coll, 1000.0f, t); }
  TableView view() const { return {&t[0][0], kNumAlgos, kNumProtos}; }
};

}  // namespace railscope::tuner::test
