// SPDX-License-Identifier: Apache-2.0
// NCCL variables that pin NCCL's own tuning. NCCL's documentation describes them as debugging or
// experimentation knobs: its cost model picks algorithm, protocol, channel count, thread count and
// buffer sizes per message size and topology, and a value left in a job script silently overrides that
// on every later cluster, NCCL version and message size (NCCL user guide, "Environment Variables";
// NVIDIA/nccl#1661 and aws/aws-ofi-nccl#982: NCCL_ALGO/NCCL_PROTO also override any tuner plugin,
// railscope's included).
// NCCL_IB_GID_INDEX is ignored by NCCL on InfiniBand (reported as gid.forced_on_ib); on RoCE the GID
// section judges it against the table.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "railscope/core/diagnosis.h"

namespace railscope::node {

struct TuningVariable {
  std::string_view name;
  std::string_view why;  // what it pins, one phrase
};
std::span<const TuningVariable> tuning_variables();

using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
// The process environment through the params registry (every name above is registered).
EnvLookup process_env();

// One env.tuning_override finding per set tuning variable; gid.forced_on_ib when NCCL_IB_GID_INDEX is
// set and every usable port is InfiniBand.
std::vector<diag::Finding> check_env_hygiene(const EnvLookup& env, bool has_roce, bool has_ib);

}  // namespace railscope::node
