// SPDX-License-Identifier: Apache-2.0
// ncclProfiler_v2 (NCCL 2.24): names as strings.
#include "plugin/profiler/abi/legacy_common.h"

namespace railscope::profiler::abi {
namespace {

ncclResult_t init_v2(void** ctx, int* mask) { return init_legacy(ctx, mask, 2); }

ncclResult_t start_v2(void* ctx, void** handle, ncclProfilerEventDescr_v2_t* d) {
  if (handle == nullptr) return ncclSuccess;
  *handle = nullptr;
  if (d == nullptr) return ncclSuccess;
  EventDescr e = legacy_header(d);
  copy_legacy_named(e, *d);
  start_event(ctx, handle, e);
  return ncclSuccess;
}

ncclResult_t stop_v2(void* handle) {
  stop_event(handle);
  return ncclSuccess;
}

ncclResult_t record_v2(void* handle, ncclProfilerEventState_t state, ncclProfilerEventStateArgs_v2_t* args) {
  forward_state_v1(handle, state, args);
  return ncclSuccess;
}

ncclResult_t finalize_v2(void* ctx) { return finalize_comm(ctx); }

}  // namespace
}  // namespace railscope::profiler::abi

extern "C" {
__attribute__((visibility("default")))
ncclProfiler_v2_t ncclProfiler_v2 = {"railscope",
                                     railscope::profiler::abi::init_v2,
                                     railscope::profiler::abi::start_v2,
                                     railscope::profiler::abi::stop_v2,
                                     railscope::profiler::abi::record_v2,
                                     railscope::profiler::abi::finalize_v2};
}  // extern "C"
