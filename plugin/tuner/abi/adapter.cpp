// SPDX-License-Identifier: Apache-2.0
#include "plugin/tuner/abi/adapter.h"

#include <algorithm>
#include <exception>
#include <limits>

#include "plugin/tuner/engine.h"
#include "railscope/core/log.h"

namespace railscope::tuner::abi {
namespace {

int clamp_count(size_t v) { return static_cast<int>(std::min<size_t>(v, std::numeric_limits<int>::max())); }

Engine* engine_of(void* ctx) { return static_cast<Engine*>(ctx); }

}  // namespace

ncclResult_t init(int version, void** ctx, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
                  ncclDebugLogger_t logger, const ncclNvlDomainInfo_v5_t* nvl,
                  const ncclTunerConstants_v5_t* constants) {
  if (logger != nullptr) log::set_nccl_logger(logger);
  if (ctx == nullptr) {
    RS_WARN("tuner: init called without a context pointer");
    return ncclInvalidArgument;
  }
  *ctx = nullptr;
  try {
    EngineInputs in;
    in.abi_version = version;
    in.comm_id = comm_id;
    in.shape.n_ranks = clamp_count(n_ranks);
    in.shape.n_nodes = clamp_count(n_nodes);
    if (nvl != nullptr && nvl->nNvlDomains > 0) {
      in.shape.nvl_domains = nvl->nNvlDomains;
      in.shape.min_ranks_per_nvl_domain = nvl->minRanksPerNvlDomain;
      in.shape.max_ranks_per_nvl_domain = nvl->maxRanksPerNvlDomain;
    }
    in.constants = constants;
    EngineOrError made = Engine::create(in);
    if (made.error) {
      RS_WARN("tuner: {} (RAILSCOPE_TUNER_STRICT=1 fails communicator creation)",
              diag::one_line(*made.error));
      return ncclInvalidUsage;
    }
    *ctx = made.engine.release();
    return ncclSuccess;
  } catch (const std::exception& e) {
    RS_WARN("tuner: init failed: {}", e.what());
  } catch (...) {
    RS_WARN("tuner: init failed");
  }
  return ncclInternalError;
}

ncclResult_t get_coll_info(void* ctx, ncclFunc_t coll, size_t bytes, int pipe_ops, float** table,
                           int num_algo, int num_proto, int reg_buff, int* n_channels) {
  // An error here would fail the collective: every problem is logged and NCCL's choice left alone.
  if (ctx == nullptr) return ncclSuccess;
  try {
    engine_of(ctx)->get_coll_info(static_cast<int>(coll), bytes, pipe_ops, table, num_algo, num_proto,
                                  reg_buff, n_channels);
  } catch (...) {
  }
  return ncclSuccess;
}

ncclResult_t get_coll_info_v2(void* ctx, ncclFunc_t coll, size_t bytes, int collnet_support, int nvls_support,
                              int pipe_ops, int* algo, int* proto, int* n_channels) {
  if (ctx == nullptr) return ncclSuccess;
  try {
    engine_of(ctx)->choose(static_cast<int>(coll), bytes, collnet_support, nvls_support, pipe_ops, algo,
                           proto, n_channels);
  } catch (...) {
  }
  return ncclSuccess;
}

ncclResult_t get_chunk_size(void* ctx, ncclFunc_t coll, size_t bytes, int algo, int proto, int /*n_channels*/,
                            size_t* chunk) {
  if (ctx == nullptr || chunk == nullptr) return ncclSuccess;
  uint64_t value = 0;
  if (engine_of(ctx)->chunk_size(static_cast<int>(coll), bytes, algo, proto, &value))
    *chunk = static_cast<size_t>(value);
  return ncclSuccess;
}

ncclResult_t finalize(void* ctx) {
  delete engine_of(ctx);
  return ncclSuccess;
}

}  // namespace railscope::tuner::abi
