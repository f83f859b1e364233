// SPDX-License-Identifier: Apache-2.0
// ncclProfiler_v4 (NCCL 2.27): comm identity at init (commName before commHash), KernelCh
// GPU timers; Coll/P2p hang below the legacy Group event, which railscope does not track.
#include "plugin/profiler/abi/adapter_common.h"

namespace railscope::profiler::abi {
namespace {

ncclResult_t init_v4(void** ctx, int* mask, const char* comm_name, uint64_t comm_hash, int nnodes, int nranks,
                     int rank, ncclDebugLogger_t logger) {
  CommInit info;
  info.hash = comm_hash;
  info.name = comm_name != nullptr ? comm_name : "";
  info.rank = rank;
  info.nranks = clamp_rank(nranks);
  info.nnodes = clamp_rank(nnodes);
  info.abi = 4;
  info.logger = logger;
  return init_comm(info, ctx, mask);
}

ncclResult_t start_v4(void* ctx, void** handle, ncclProfilerEventDescr_v4_t* d) {
  if (handle == nullptr) return ncclSuccess;
  *handle = nullptr;
  if (d == nullptr) return ncclSuccess;
  EventDescr e;
  e.type = d->type;
  e.rank = d->rank;
  const bool task = e.type == ncclProfileColl || e.type == ncclProfileP2p;
  e.parent = task ? nullptr : d->parentObj;  // a Group handle for tasks: not ours to use
  copy_v4_common(e, *d);
  start_event(ctx, handle, e);
  return ncclSuccess;
}

ncclResult_t stop_v4(void* handle) {
  stop_event(handle);
  return ncclSuccess;
}

ncclResult_t record_v4_state(void* handle, ncclProfilerEventState_t state,
                             ncclProfilerEventStateArgs_v4_t* args) {
  forward_state_v4(handle, state, args);
  return ncclSuccess;
}

ncclResult_t finalize_v4(void* ctx) { return finalize_comm(ctx); }

}  // namespace
}  // namespace railscope::profiler::abi

extern "C" {
__attribute__((visibility("default")))
ncclProfiler_v4_t ncclProfiler_v4 = {"railscope",
                                     railscope::profiler::abi::init_v4,
                                     railscope::profiler::abi::start_v4,
                                     railscope::profiler::abi::stop_v4,
                                     railscope::profiler::abi::record_v4_state,
                                     railscope::profiler::abi::finalize_v4};
}  // extern "C"
