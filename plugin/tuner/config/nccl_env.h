// SPDX-License-Identifier: Apache-2.0
// NCCL_ALGO / NCCL_PROTO as NCCL reads them ("ring,tree", "^LL128", "allreduce:tree;broadcast:ring"):
// which collectives the user restricted. Where the user restricted a collective the tuner leaves the
// cost table exactly as NCCL filled it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "plugin/tuner/model/types.h"

namespace railscope::tuner {

struct UserRestrictions {
  bool restricted[kNumColls] = {};
  std::string why[kNumColls];  // e.g. "NCCL_ALGO=^ring"
  std::string warning;         // set when a value could not be parsed (then every collective is restricted)
};

// A list value in NCCL's syntax: which elements are enabled per collective (bit per element).
// nullopt and `error` when the value cannot be parsed.
std::optional<std::array<uint32_t, kNumColls>> parse_nccl_list(std::string_view value, bool algorithms,
                                                               std::string* error);

UserRestrictions restrictions_from(std::optional<std::string> nccl_algo,
                                   std::optional<std::string> nccl_proto);

}  // namespace railscope::tuner
