// SPDX-License-Identifier: Apache-2.0
// The rows `railscope tuner explain` prints: for each size, the Engine's decision over the table NCCL
// would pass, rendered as a text table or JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "plugin/tuner/engine.h"

namespace railscope::cli::tuner_explain {

struct Request {
  int coll = railscope::tuner::kAllReduce;
  uint64_t min_bytes = 8;
  uint64_t max_bytes = 16ull << 30;
  int pipe_ops = 1;
  int reg_buff = 0;
};

// The bus bandwidth the chosen entry's cost predicts, GB/s (10^9 bytes/s): bytes / cost x NCCL's bus
// factor for the collective and rank count; 0 when the decision leaves NCCL's table as it is.
double predicted_busbw_GBps(const railscope::tuner::Decision& d, int n_ranks);

// Decisions for min_bytes, 2·min_bytes, … max_bytes, through Engine::decide.
std::vector<railscope::tuner::Decision> explain(const railscope::tuner::Engine& engine, const Request& req);

// With a calibration: per size, the model's decision (NCCL's likely choice offline is the cheapest
// entry of its table as the model estimates it) and the calibrated decision over that table.
struct CalibratedRow {
  railscope::tuner::Decision model;
  railscope::tuner::Decision calibrated;
};
std::vector<CalibratedRow> explain_calibrated(const railscope::tuner::Engine& engine, const Request& req);
std::string render_calibrated_text(const railscope::tuner::Engine& engine,
                                   const std::vector<CalibratedRow>& rows);
nlohmann::json render_calibrated_json(const railscope::tuner::Engine& engine,
                                      const std::vector<CalibratedRow>& rows);

std::string render_text(const railscope::tuner::Engine& engine,
                        const std::vector<railscope::tuner::Decision>& rows);
nlohmann::json render_json(const railscope::tuner::Engine& engine,
                           const std::vector<railscope::tuner::Decision>& rows);

}  // namespace railscope::cli::tuner_explain
