// SPDX-License-Identifier: Apache-2.0
// ncclTunerPlugin_v2 (NCCL 2.21): returns a choice; NCCL marks it in its table.
#include "plugin/tuner/abi/adapter.h"

namespace {
namespace abi = railscope::tuner::abi;

ncclResult_t init_v2(size_t n_ranks, size_t n_nodes, ncclDebugLogger_t logger, void** ctx) {
  return abi::init(2, ctx, 0, n_ranks, n_nodes, logger, nullptr, nullptr);
}
}  // namespace

extern "C" {
__attribute__((visibility("default")))
ncclTuner_v2_t ncclTunerPlugin_v2 = {abi::kPluginName, init_v2, abi::get_coll_info_v2, abi::finalize};
}
