// SPDX-License-Identifier: Apache-2.0
// The tuner's one internal interface. Each ABI adapter (abi/tuner_vN.cpp) converts NCCL's arguments
// and calls an Engine; `railscope tuner explain` builds the same Engine from its flags. An Engine is
// immutable after create() except for the "already logged" bits, so NCCL may call it from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "plugin/tuner/config/config.h"
#include "plugin/tuner/config/nccl_env.h"
#include "plugin/tuner/explain/decision.h"
#include "plugin/tuner/model/calibration.h"
#include "plugin/tuner/model/cost_model.h"
#include "plugin/tuner/model/figures.h"
#include "plugin/tuner/model/topology.h"
#include "railscope/core/diagnosis.h"
#include "railscope/nccl/tuner.h"

namespace railscope::tuner {

struct EngineInputs {
  int abi_version = 6;
  uint64_t comm_id = 0;
  CommShape shape;
  const ncclTunerConstants_v5_t* constants = nullptr;  // v5+: NCCL's constants (read only here)
  NodeOverrides overrides;                             // highest priority (CLI flags); sources "cli"
  std::optional<std::string> config_path;              // unset: RAILSCOPE_TUNER_CONFIG
  std::optional<std::string> calibration_path;         // unset: RAILSCOPE_TUNER_CALIBRATION
  std::optional<bool> strict;                          // unset: RAILSCOPE_TUNER_STRICT
  // How the user turns strict mode off, named in messages: the CLI's flag, or the variable.
  std::string lax_switch = "RAILSCOPE_TUNER_STRICT=0";
  std::optional<NicFacts> discovered;  // unset: read the node (lib/node) when needed
  bool log_decisions = true;           // once per (collective, size bucket)
};

class Engine;
struct EngineOrError {
  std::unique_ptr<Engine> engine;
  std::optional<diag::Finding> error;  // set only when strict mode refuses a bad config
};

class Engine {
 public:
  static EngineOrError create(const EngineInputs& inputs);

  // The decision function (pure): what NCCL's table would get for this call.
  Decision decide(int coll, uint64_t bytes, int pipe_ops, int reg_buff, TableView table) const;

  // ABI v3-v6: validates the arguments (a bad table is left untouched and the reason logged once),
  // decides, applies, logs the decision once per (collective, size bucket). Never fails.
  void get_coll_info(int coll, uint64_t bytes, int pipe_ops, float** cost_table, int num_algo, int num_proto,
                     int reg_buff, int* n_channels) const;
  // ABI v2: a choice instead of a table edit; -1 leaves NCCL's choice.
  void choose(int coll, uint64_t bytes, int collnet_support, int nvls_support, int pipe_ops, int* algo,
              int* proto, int* n_channels) const;
  // ABI v6: true when a rule set *chunk.
  bool chunk_size(int coll, uint64_t bytes, int algo, int proto, uint64_t* chunk) const;

  const Topology& topology() const { return topo_; }
  const Figures& figures() const { return figures_; }
  const CostModel& model() const { return model_; }
  const Config& config() const { return config_; }
  const Calibration& calibration() const { return calibration_; }
  // Why the calibration does not apply to this communicator; unset when it applies or there is none.
  const std::optional<diag::Finding>& calibration_refusal() const { return calibration_refusal_; }
  // The network bandwidth per rail the model priced: "measured 46.1 GB/s per rail by preflight (...)" or
  // "nominal ..."; "" when the communicator crosses no NIC or its NICs are unknown.
  const std::string& rail_basis() const { return rail_basis_; }
  const UserRestrictions& restrictions() const { return user_; }
  Policy policy() const;
  std::string summary() const;  // one line for the init log and the CLI header

 private:
  Engine() = default;
  void log_once(const Decision& d) const;

  int abi_version_ = 0;
  uint64_t comm_id_ = 0;
  Topology topo_;
  Figures figures_;
  Config config_;
  CostModel model_;
  Calibration calibration_;
  std::optional<diag::Finding> calibration_refusal_;
  std::string calibration_path_;
  std::string rail_basis_;
  UserRestrictions user_;
  bool log_decisions_ = true;
  int config_errors_ignored_ = 0;
  mutable std::atomic<uint64_t> logged_[kNumColls] = {};
  mutable std::atomic<bool> bad_args_logged_{false};
};

// The node's NICs as lib/node reads them (active ports NCCL_IB_HCA selects, their speed and link
// layer, and the node's GPU count); unknown (count 0) when the node library is not built in or finds
// nothing.
NicFacts discover_node_nics();
// NVIDIA GPUs on the node's PCI bus; 0 when unknown.
int discover_node_gpus();

}  // namespace railscope::tuner
