// SPDX-License-Identifier: Apache-2.0
// Shared by the v1..v3 adapters (NCCL 2.23–2.25): init carries no communicator identity, so rank
// comes from each descriptor and nRanks stays unknown (busbw is then not computed).
#pragma once

#include "plugin/profiler/abi/adapter_common.h"

namespace railscope::profiler::abi {

inline ncclResult_t init_legacy(void** ctx, int* mask, int abi) {
  CommInit info;
  info.abi = abi;
  return init_comm(info, ctx, mask);
}

// v2/v3: names as strings, identical task fields.
template <typename D>
void copy_legacy_named(EventDescr& e, const D& d) {
  switch (e.type) {
    case ncclProfileColl:
      e.seq = d.coll.seqNumber;
      e.has_seq = true;
      e.op = op_from_name(d.coll.func);
      e.count = d.coll.count;
      e.root = d.coll.root;
      e.datatype = d.coll.datatype;
      e.channels = d.coll.nMaxChannels;
      e.algo = d.coll.algo;
      e.proto = d.coll.proto;
      break;
    case ncclProfileP2p:
      e.op = op_from_name(d.p2p.func);
      e.datatype = d.p2p.datatype;
      e.count = d.p2p.count;
      e.peer = d.p2p.peer;
      break;
    case ncclProfileProxyOp: copy_proxy_op(e, d.proxyOp); break;
    default: break;
  }
}

template <typename D>
EventDescr legacy_header(const D* d) {
  EventDescr e;
  e.type = d->type;
  e.rank = d->rank;
  const bool task = e.type == ncclProfileColl || e.type == ncclProfileP2p;
  e.parent = task ? nullptr : d->parentObj;  // tasks hang below the Group event: not tracked
  return e;
}

}  // namespace railscope::profiler::abi
