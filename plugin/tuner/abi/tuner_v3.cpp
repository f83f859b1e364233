// SPDX-License-Identifier: Apache-2.0
// ncclTunerPlugin_v3 (NCCL 2.22): edits the cost table; no registered-buffer flag.
#include "plugin/tuner/abi/adapter.h"

namespace {
namespace abi = railscope::tuner::abi;

ncclResult_t init_v3(size_t n_ranks, size_t n_nodes, ncclDebugLogger_t logger, void** ctx) {
  return abi::init(3, ctx, 0, n_ranks, n_nodes, logger, nullptr, nullptr);
}
ncclResult_t get_coll_info_v3(void* ctx, ncclFunc_t coll, size_t bytes, int pipe_ops, float** table,
                              int num_algo, int num_proto, int* n_channels) {
  return abi::get_coll_info(ctx, coll, bytes, pipe_ops, table, num_algo, num_proto, -1, n_channels);
}
}  // namespace

extern "C" {
__attribute__((visibility("default")))
ncclTuner_v3_t ncclTunerPlugin_v3 = {abi::kPluginName, init_v3, get_coll_info_v3, abi::finalize};
}
