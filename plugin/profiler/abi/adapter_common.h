// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the per-version adapters: the parts of NCCL's descriptors that did not change.
#pragma once

#include "plugin/profiler/core/events.h"
#include "plugin/profiler/core/profiler_core.h"
#include "railscope/nccl/profiler.h"

namespace railscope::profiler::abi {

inline void copy_proxy_op(EventDescr& e, const ncclProfilerProxyOpDescr& p) {
  e.pid = p.pid;
  e.channel = p.channelId;
  e.peer = p.peer;
  e.nsteps = p.nSteps;
  e.is_send = p.isSend != 0;
}

inline int clamp_rank(int nranks) { return nranks > 0 ? nranks : 0; }

// v4..v6 share the descriptor union layout for everything but the API events.
template <typename D>
void copy_v4_common(EventDescr& e, const D& d) {
  switch (e.type) {
    case ncclProfileColl:
      e.seq = d.coll.seqNumber;
      e.has_seq = true;
      e.op = op_from_name(d.coll.func);
      e.count = d.coll.count;
      e.root = d.coll.root;
      e.datatype = d.coll.datatype;
      e.channels = d.coll.nChannels;
      e.algo = d.coll.algo;
      e.proto = d.coll.proto;
      break;
    case ncclProfileP2p:
      e.op = op_from_name(d.p2p.func);
      e.datatype = d.p2p.datatype;
      e.count = d.p2p.count;
      e.peer = d.p2p.peer;
      e.channels = d.p2p.nChannels;
      break;
    case ncclProfileProxyOp: copy_proxy_op(e, d.proxyOp); break;
    case ncclProfileKernelCh:
      e.channel = d.kernelCh.channelId;
      e.gpu_timer = d.kernelCh.pTimer;
      e.has_gpu_timer = true;
      break;
    case ncclProfileNetPlugin:
      e.net_id = d.netPlugin.id;
      e.net_data = d.netPlugin.data;
      break;
    default: break;
  }
}

// v5/v6: API events, and Coll/P2p hang below their CollApi/P2pApi event.
template <typename D>
EventDescr from_v5(const D* d) {
  EventDescr e;
  if (d == nullptr) return e;
  e.type = d->type;
  e.parent = d->parentObj;
  e.rank = d->rank;
  copy_v4_common(e, *d);
  if (e.type == ncclProfileCollApi) e.graph = d->collApi.graphCaptured ? 1 : 0;
  if (e.type == ncclProfileP2pApi) e.graph = d->p2pApi.graphCaptured ? 1 : 0;
  return e;
}

inline void forward_state_v4(void* handle, ncclProfilerEventState_t state,
                             const ncclProfilerEventStateArgs_v4_t* args) {
  uint64_t value = 0;
  void* data = nullptr;
  if (args != nullptr) {
    if (state == ncclProfilerKernelChStop)
      value = args->kernelCh.pTimer;
    else if (state == ncclProfilerNetPluginUpdate)
      data = args->netPlugin.data;
    else if (state >= ncclProfilerProxyStepSendGPUWait && state <= ncclProfilerProxyStepRecvGPUWait)
      value = args->proxyStep.transSize;
    else if (state == ncclProfilerProxyStepSendPeerWait_v4)
      value = args->proxyStep.transSize;
  }
  record_state(handle, static_cast<int>(state), value, data);
}

inline void forward_state_v1(void* handle, ncclProfilerEventState_t state,
                             const ncclProfilerEventStateArgs_v1_t* args) {
  record_state(handle, static_cast<int>(state), args != nullptr ? args->proxyOp.transSize : 0, nullptr);
}

}  // namespace railscope::profiler::abi
