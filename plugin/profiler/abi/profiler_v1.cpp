// SPDX-License-Identifier: Apache-2.0
// ncclProfiler_v1 (NCCL 2.23): func, datatype, algo and proto as NCCL's enum numbers.
#include "plugin/profiler/abi/legacy_common.h"

namespace railscope::profiler::abi {
namespace {

ncclResult_t init_v1(void** ctx, int* mask) { return init_legacy(ctx, mask, 1); }

ncclResult_t start_v1(void* ctx, void** handle, ncclProfilerEventDescr_v1_t* d) {
  if (handle == nullptr) return ncclSuccess;
  *handle = nullptr;
  if (d == nullptr) return ncclSuccess;
  EventDescr e = legacy_header(d);
  switch (e.type) {
    case ncclProfileColl:
      e.seq = d->coll.seqNumber;
      e.has_seq = true;
      e.op = op_from_nccl_func(d->coll.func);
      e.count = d->coll.count;
      e.root = d->coll.root;
      e.datatype = datatype_name_from_nccl(d->coll.datatype);
      e.channels = d->coll.nMaxChannels;
      e.algo = algo_name_from_nccl(d->coll.algo);
      e.proto = proto_name_from_nccl(d->coll.proto);
      break;
    case ncclProfileP2p:
      e.op = op_from_nccl_func(d->p2p.func);
      e.datatype = datatype_name_from_nccl(d->p2p.datatype);
      e.count = d->p2p.count;
      e.peer = d->p2p.peer;
      break;
    case ncclProfileProxyOp: copy_proxy_op(e, d->proxyOp); break;
    default: break;
  }
  start_event(ctx, handle, e);
  return ncclSuccess;
}

ncclResult_t stop_v1(void* handle) {
  stop_event(handle);
  return ncclSuccess;
}

ncclResult_t record_v1(void* handle, ncclProfilerEventState_t state, ncclProfilerEventStateArgs_v1_t* args) {
  forward_state_v1(handle, state, args);
  return ncclSuccess;
}

ncclResult_t finalize_v1(void* ctx) { return finalize_comm(ctx); }

}  // namespace
}  // namespace railscope::profiler::abi

extern "C" {
__attribute__((visibility("default")))
ncclProfiler_v1_t ncclProfiler_v1 = {"railscope",
                                     railscope::profiler::abi::init_v1,
                                     railscope::profiler::abi::start_v1,
                                     railscope::profiler::abi::stop_v1,
                                     railscope::profiler::abi::record_v1,
                                     railscope::profiler::abi::finalize_v1};
}  // extern "C"
