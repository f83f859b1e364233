// SPDX-License-Identifier: Apache-2.0
// ncclTunerPlugin_v6 (NCCL 2.30): v5 plus getChunkSize.
#include "plugin/tuner/abi/adapter.h"

namespace {
namespace abi = railscope::tuner::abi;

ncclResult_t init_v6(void** ctx, uint64_t comm_id, size_t n_ranks, size_t n_nodes, ncclDebugLogger_t logger,
                     ncclNvlDomainInfo_v6_t* nvl, ncclTunerConstants_v6_t* constants) {
  return abi::init(6, ctx, comm_id, n_ranks, n_nodes, logger, nvl, constants);
}
}  // namespace

extern "C" {
__attribute__((visibility("default"))) ncclTuner_v6_t ncclTunerPlugin_v6 = {
    abi::kPluginName, init_v6, abi::get_coll_info, abi::finalize, abi::get_chunk_size};
}
