// SPDX-License-Identifier: Apache-2.0
// Tuning variables NCCL advises against leaving set (see env_hygiene.h for the choice).
#include "railscope/node/env_hygiene.h"

#include <fmt/format.h>

#include "railscope/core/params.h"

namespace railscope::node {
namespace {

constexpr TuningVariable kTuning[] = {
    {"NCCL_ALGO", "the algorithm for every message size (also overrides tuner plugins)"},
    {"NCCL_PROTO", "the protocol for every message size (also overrides tuner plugins)"},
    {"NCCL_MIN_NCHANNELS", "a floor on the channel count"},
    {"NCCL_MAX_NCHANNELS", "a ceiling on the channel count"},
    {"NCCL_MIN_CTAS", "a floor on the CTA (channel) count"},
    {"NCCL_MAX_CTAS", "a ceiling on the CTA (channel) count"},
    {"NCCL_NTHREADS", "the CUDA threads per block"},
    {"NCCL_BUFFSIZE", "the Simple protocol buffer size"},
    {"NCCL_LL_BUFFSIZE", "the LL protocol buffer size"},
    {"NCCL_LL128_BUFFSIZE", "the LL128 protocol buffer size"},
};

}  // namespace

std::span<const TuningVariable> tuning_variables() { return kTuning; }

EnvLookup process_env() {
  return [](std::string_view name) { return params::raw(name); };
}

std::vector<diag::Finding> check_env_hygiene(const EnvLookup& env, bool has_roce, bool has_ib) {
  std::vector<diag::Finding> out;
  for (const auto& v : kTuning) {
    if (auto value = env(v.name))
      out.push_back(
          diag::make("env.tuning_override", fmt::format("{}={} pins {}", v.name, *value, v.why),
                     fmt::format("Unset {} unless a measurement on this cluster shows it helps", v.name)));
  }
  if (auto gid = env("NCCL_IB_GID_INDEX"); gid && has_ib && !has_roce)
    out.push_back(diag::make("gid.forced_on_ib",
                             fmt::format("NCCL_IB_GID_INDEX={} is set but every port is InfiniBand", *gid)));
  return out;
}

}  // namespace railscope::node
