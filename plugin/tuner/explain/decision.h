// SPDX-License-Identifier: Apache-2.0
// One tuning decision and everything needed to explain it: every candidate's cost (the model's, a
// measured figure's, or NCCL's own estimate where there is no model), the choice, the runner-up and
// what decided. `decide` is the single decision function: the plugin and `railscope tuner explain`
// both call it, so what the CLI prints is what NCCL gets.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "plugin/tuner/config/config.h"
#include "plugin/tuner/config/nccl_env.h"
#include "plugin/tuner/model/calibration.h"
#include "plugin/tuner/model/cost_model.h"

namespace railscope::tuner {

// NCCL's cost table as a read-only view: a flat float[num_algo][num_proto].
struct TableView {
  const float* data = nullptr;
  int num_algo = 0;
  int num_proto = 0;
  float at(int a, int p) const { return a < num_algo && p < num_proto ? data[a * num_proto + p] : -1.0f; }
};

enum class Reason : uint8_t {
  Rule,            // a matching rule pinned the choice
  Model,           // the cheapest candidate by the cost model (and NCCL's estimates where no model)
  NcclNoModel,     // no supported entry has a model: NCCL's choice stands
  UserRestricted,  // NCCL_ALGO / NCCL_PROTO restrict this collective: NCCL's choice stands
  NoCandidate,     // nothing supported (or not a tunable collective): table untouched
  Measured,        // the calibration's best is faster than NCCL's choice by more than both spreads
  MeasuredKeeps,   // the calibration covers this size but does not beat NCCL's choice: table untouched
};
std::string_view to_string(Reason r);

struct Candidate {
  float nccl = -1;                       // NCCL's entry; < 0 = unsupported
  float cost = -1;                       // what the decision compared (µs); < 0 = not a candidate
  CostSource source = CostSource::None;  // None with cost >= 0: NCCL's estimate
  Terms terms;                           // model/measured breakdown
  MeasuredBusbw measured;                // the calibration's figure (source Measured, busbw_gbs > 0)
  bool supported() const { return nccl >= 0; }
  bool calibrated() const { return measured.busbw_gbs > 0; }
};

struct Decision {
  int coll = -1;
  uint64_t bytes = 0;
  int pipe_ops = 1;
  int reg_buff = -1;  // -1 = not given (v2, v3)
  Reason reason = Reason::NoCandidate;
  int algo = -1, proto = -1;  // the choice; -1 = leave NCCL's
  float cost = 0;
  int runner_algo = -1, runner_proto = -1;
  float runner_cost = 0;
  const Rule* rule = nullptr;          // the rule that decided (Reason::Rule)
  const Rule* rule_skipped = nullptr;  // a matching rule whose pin NCCL does not support here
  int channels = 0;                    // 0 = NCCL's count
  // With a calibration covering this size: NCCL's own choice (its cheapest entry) and the measured best.
  int nccl_algo = -1, nccl_proto = -1;
  int best_algo = -1, best_proto = -1;
  Candidate cand[kNumAlgos][kNumProtos];

  bool changes_table() const { return algo >= 0 && proto >= 0; }
};

// What a decision depends on besides the call's arguments; owned by the engine.
struct Policy {
  const CostModel* model = nullptr;
  std::span<const Rule> rules;
  const UserRestrictions* user = nullptr;
  int n_nodes = 1;
  int n_ranks = 1;
  const Calibration* calibration = nullptr;  // active or null
};

Decision decide(const Policy& policy, int coll, uint64_t bytes, int pipe_ops, int reg_buff, TableView table);

// Writes a decision into NCCL's table (chosen entry to 0.0, never an unsupported one) and channels.
void apply(const Decision& d, float* table, int num_proto, int* n_channels);

// One line for the logs: choice, cost, runner-up and the rule or model term that decided.
std::string describe(const Decision& d, std::string_view config_path);
// Why a calibrated size kept or changed NCCL's choice, with both measurements.
std::string measured_why(const Decision& d);
// The measured best's busbw over NCCL's choice's where the calibration overrides NCCL; 1 otherwise.
double expected_gain(const Decision& d);
// The deciding term for a model decision: "latency" or "bandwidth", with both candidates' values.
std::string deciding_term(const Decision& d);

}  // namespace railscope::tuner
