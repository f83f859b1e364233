// SPDX-License-Identifier: Apache-2.0
// ncclTunerPlugin_v4 (NCCL 2.24): v3 plus the registered-buffer flag.
#include "plugin/tuner/abi/adapter.h"

namespace {
namespace abi = railscope::tuner::abi;

ncclResult_t init_v4(size_t n_ranks, size_t n_nodes, ncclDebugLogger_t logger, void** ctx) {
  return abi::init(4, ctx, 0, n_ranks, n_nodes, logger, nullptr, nullptr);
}
}  // namespace

extern "C" {
__attribute__((visibility("default")))
ncclTuner_v4_t ncclTunerPlugin_v4 = {abi::kPluginName, init_v4, abi::get_coll_info, abi::finalize};
}
