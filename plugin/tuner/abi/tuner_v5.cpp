// SPDX-License-Identifier: Apache-2.0
// ncclTunerPlugin_v5 (NCCL 2.28): communicator id, NVLink domains and NCCL's model constants at init.
#include "plugin/tuner/abi/adapter.h"

namespace {
namespace abi = railscope::tuner::abi;

ncclResult_t init_v5(void** ctx, uint64_t comm_id, size_t n_ranks, size_t n_nodes, ncclDebugLogger_t logger,
                     ncclNvlDomainInfo_v5_t* nvl, ncclTunerConstants_v5_t* constants) {
  return abi::init(5, ctx, comm_id, n_ranks, n_nodes, logger, nvl, constants);
}
}  // namespace

extern "C" {
__attribute__((visibility("default")))
ncclTuner_v5_t ncclTunerPlugin_v5 = {abi::kPluginName, init_v5, abi::get_coll_info, abi::finalize};
}
