// SPDX-License-Identifier: Apache-2.0
// What every ABI version's adapter shares: turning NCCL's init arguments into an Engine (the context
// handed back to NCCL), and converting results to ncclResult_t at the edge. No exception crosses it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "railscope/nccl/tuner.h"

namespace railscope::tuner::abi {

inline constexpr const char* kPluginName = "railscope";

// nvl / constants are null for v2-v4.
ncclResult_t init(int version, void** ctx, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
                  ncclDebugLogger_t logger, const ncclNvlDomainInfo_v5_t* nvl,
                  const ncclTunerConstants_v5_t* constants);
// reg_buff -1 when the version has none (v3).
ncclResult_t get_coll_info(void* ctx, ncclFunc_t coll, size_t bytes, int pipe_ops, float** table,
                           int num_algo, int num_proto, int reg_buff, int* n_channels);
ncclResult_t get_coll_info_v2(void* ctx, ncclFunc_t coll, size_t bytes, int collnet_support, int nvls_support,
                              int pipe_ops, int* algo, int* proto, int* n_channels);
ncclResult_t get_chunk_size(void* ctx, ncclFunc_t coll, size_t bytes, int algo, int proto, int n_channels,
                            size_t* chunk);
ncclResult_t finalize(void* ctx);

}  // namespace railscope::tuner::abi
