// SPDX-License-Identifier: Apache-2.0
// ncclProfiler_v6 (NCCL 2.29, adds copy-engine events, which are not tracked): a thin adapter over the
// internal interface.
#include "plugin/profiler/abi/adapter_common.h"

namespace railscope::profiler::abi {
namespace {

ncclResult_t init_v6(void** ctx, uint64_t comm_id, int* mask, const char* comm_name, int nnodes, int nranks,
                     int rank, ncclDebugLogger_t logger) {
  CommInit info;
  info.hash = comm_id;
  info.name = comm_name != nullptr ? comm_name : "";
  info.rank = rank;
  info.nranks = clamp_rank(nranks);
  info.nnodes = clamp_rank(nnodes);
  info.abi = 6;
  info.logger = logger;
  return init_comm(info, ctx, mask);
}

ncclResult_t start_v6(void* ctx, void** handle, ncclProfilerEventDescr_v6_t* d) {
  if (handle == nullptr) return ncclSuccess;
  *handle = nullptr;
  if (d == nullptr) return ncclSuccess;
  start_event(ctx, handle, from_v5(d));
  return ncclSuccess;
}

ncclResult_t stop_v6(void* handle) {
  stop_event(handle);
  return ncclSuccess;
}

ncclResult_t record_v6(void* handle, ncclProfilerEventState_t state, ncclProfilerEventStateArgs_v6_t* args) {
  forward_state_v4(handle, state, args);
  return ncclSuccess;
}

ncclResult_t finalize_v6(void* ctx) { return finalize_comm(ctx); }

}  // namespace
}  // namespace railscope::profiler::abi

extern "C" {
__attribute__((visibility("default")))
ncclProfiler_v6_t ncclProfiler_v6 = {"railscope",
                                     railscope::profiler::abi::init_v6,
                                     railscope::profiler::abi::start_v6,
                                     railscope::profiler::abi::stop_v6,
                                     railscope::profiler::abi::record_v6,
                                     railscope::profiler::abi::finalize_v6};
}  // extern "C"
