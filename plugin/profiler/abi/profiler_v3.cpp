// SPDX-License-Identifier: Apache-2.0
// ncclProfiler_v3 (NCCL 2.26): adds KernelCh (no GPU timer yet) and NetPlugin events.
#include "plugin/profiler/abi/legacy_common.h"

namespace railscope::profiler::abi {
namespace {

ncclResult_t init_v3(void** ctx, int* mask) { return init_legacy(ctx, mask, 3); }

ncclResult_t start_v3(void* ctx, void** handle, ncclProfilerEventDescr_v3_t* d) {
  if (handle == nullptr) return ncclSuccess;
  *handle = nullptr;
  if (d == nullptr) return ncclSuccess;
  EventDescr e = legacy_header(d);
  copy_legacy_named(e, *d);
  if (e.type == ncclProfileKernelCh) e.channel = d->kernelCh.channelId;
  if (e.type == ncclProfileNetPlugin) {
    e.net_id = d->netPlugin.id;
    e.net_data = d->netPlugin.data;
  }
  start_event(ctx, handle, e);
  return ncclSuccess;
}

ncclResult_t stop_v3(void* handle) {
  stop_event(handle);
  return ncclSuccess;
}

ncclResult_t record_v3(void* handle, ncclProfilerEventState_t state, ncclProfilerEventStateArgs_v3_t* args) {
  forward_state_v1(handle, state, args);
  return ncclSuccess;
}

ncclResult_t finalize_v3(void* ctx) { return finalize_comm(ctx); }

}  // namespace
}  // namespace railscope::profiler::abi

extern "C" {
__attribute__((visibility("default")))
ncclProfiler_v3_t ncclProfiler_v3 = {"railscope",
                                     railscope::profiler::abi::init_v3,
                                     railscope::profiler::abi::start_v3,
                                     railscope::profiler::abi::stop_v3,
                                     railscope::profiler::abi::record_v3,
                                     railscope::profiler::abi::finalize_v3};
}  // extern "C"
