// SPDX-License-Identifier: Apache-2.0
// start/stop/record for every event kind. Runs on NCCL's threads: only pool operations and relaxed
// atomics here — no allocation, no locks, no logging, no I/O.
#include <unistd.h>

#include "plugin/profiler/core/clock.h"
#include "plugin/profiler/core/comm_state.h"
#include "plugin/profiler/core/profiler_core.h"
#include "plugin/profiler/core/wait_state.h"
#include "railscope/nccl/profiler.h"

namespace railscope::profiler {
namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

pid_t own_pid() {
  static const pid_t pid = getpid();
  return pid;
}

void atomic_max(std::atomic<uint64_t>& a, uint64_t v) {
  uint64_t cur = a.load(kRelaxed);
  while (v > cur && !a.compare_exchange_weak(cur, v, kRelaxed)) {
  }
}
void atomic_min(std::atomic<uint64_t>& a, uint64_t v) {
  uint64_t cur = a.load(kRelaxed);
  while (v < cur && !a.compare_exchange_weak(cur, v, kRelaxed)) {
  }
}

Kind kind_of(const void* handle) {
  return static_cast<const EventHeader*>(handle)->kind.load(std::memory_order_acquire);
}

// A parent handle is used only if it is a live slot of this communicator's pool of that kind.
CollSlot* as_coll(CommState* c, void* parent) {
  if (parent == nullptr || !c->colls.owns(parent)) return nullptr;
  const Kind k = kind_of(parent);
  return (k == Kind::Coll || k == Kind::P2p) ? static_cast<CollSlot*>(parent) : nullptr;
}
ProxyOpSlot* as_op(CommState* c, void* parent) {
  if (parent == nullptr || !c->ops.owns(parent) || kind_of(parent) != Kind::ProxyOp) return nullptr;
  return static_cast<ProxyOpSlot*>(parent);
}

void child_started(CollSlot* coll) {
  coll->alive.fetch_add(1, kRelaxed);
  coll->children_seen.fetch_add(1, kRelaxed);
  coll->candidate_ns.store(0, kRelaxed);
}

void maybe_complete(CollSlot* coll, uint64_t now) {
  CommState* c = coll->h.comm;
  if (!coll->stopped.load(std::memory_order_acquire) || coll->alive.load(std::memory_order_acquire) != 0)
    return;
  if (c->expects_children()) {
    if (coll->children_seen.load(kRelaxed) == 0) return;
    if (c->tracks_kernel() && coll->channels > 0 && coll->kernel_stops.load(kRelaxed) > 0 &&
        coll->kernel_stops.load(kRelaxed) < coll->channels)
      return;
  }
  coll->candidate_ns.store(now, std::memory_order_release);
}

void child_stopped(CollSlot* coll, uint64_t now) {
  atomic_max(coll->last_child_stop_ns, now);
  if (coll->alive.fetch_sub(1, std::memory_order_acq_rel) == 1) maybe_complete(coll, now);
}

constinit ApiSlot g_api_captured{{Kind::Api, nullptr}, 1};
constinit ApiSlot g_api_not_captured{{Kind::Api, nullptr}, 0};
constinit ApiSlot g_api_unknown{{Kind::Api, nullptr}, -1};

void* start_api(const EventDescr& d) {
  return d.graph > 0 ? &g_api_captured : (d.graph == 0 ? &g_api_not_captured : &g_api_unknown);
}

void* start_coll(CommState* c, const EventDescr& d, bool p2p) {
  // Counted before the slot is taken: a collective dropped for a full pool still has its place.
  const uint64_t ord = p2p ? 0 : c->coll_ord.fetch_add(1, kRelaxed);
  CollSlot* s = c->colls.acquire();
  if (s == nullptr) {
    c->drop(p2p ? DropKind::P2p : DropKind::Coll);
    return nullptr;
  }
  s->h.comm = c;
  s->op = d.op;
  s->datatype = d.datatype;
  s->algo = d.algo;
  s->proto = d.proto;
  s->seq = p2p ? c->p2p_seq.fetch_add(1, kRelaxed) : d.seq;
  s->ord = ord;
  s->count = d.count;
  s->root = d.root;
  s->peer = d.peer;
  s->channels = d.channels;
  s->rank = d.rank;
  s->graph = d.graph;
  if (s->graph < 0 && (d.parent == &g_api_captured || d.parent == &g_api_not_captured))
    s->graph = d.parent == &g_api_captured ? 1 : 0;
  s->stopped.store(false, kRelaxed);
  s->stop_ns.store(0, kRelaxed);
  s->alive.store(0, kRelaxed);
  s->children_seen.store(0, kRelaxed);
  s->kernel_stops.store(0, kRelaxed);
  s->last_child_stop_ns.store(0, kRelaxed);
  s->candidate_ns.store(0, kRelaxed);
  s->gpu_min_start.store(UINT64_MAX, kRelaxed);
  s->gpu_max_stop.store(0, kRelaxed);
  s->kcpu_min_start.store(UINT64_MAX, kRelaxed);
  s->kcpu_max_stop.store(0, kRelaxed);
  s->ops_head.store(nullptr, kRelaxed);
  s->hang_reported = false;
  s->start_ns = now_ns();
  s->h.kind.store(p2p ? Kind::P2p : Kind::Coll, std::memory_order_release);
  return s;
}

void* start_proxy_op(CommState* c, const EventDescr& d) {
  // PXN: a proxy op owned by another process; its parent pointer lives in that process.
  const bool foreign = d.pid != 0 && d.pid != own_pid();
  if (foreign) c->pxn_proxy_ops.fetch_add(1, kRelaxed);
  CollSlot* parent = foreign ? nullptr : as_coll(c, d.parent);
  ProxyOpSlot* s = c->ops.acquire();
  if (s == nullptr) {
    c->drop(DropKind::ProxyOp);
    return nullptr;
  }
  s->h.comm = c;
  s->parent = parent;
  s->channel = d.channel;
  s->peer = d.peer;
  s->is_send = d.is_send;
  s->peer_ns.store(0, kRelaxed);
  s->net_ns.store(0, kRelaxed);
  s->gpu_ns.store(0, kRelaxed);
  s->bytes.store(0, kRelaxed);
  s->steps.store(0, kRelaxed);
  s->cur_state.store(kNoState, kRelaxed);
  s->cur_since_ns.store(now_ns(), kRelaxed);
  s->stopped.store(false, kRelaxed);
  s->h.kind.store(Kind::ProxyOp, std::memory_order_release);
  if (parent != nullptr) {
    child_started(parent);
    s->next = parent->ops_head.load(kRelaxed);
    while (!parent->ops_head.compare_exchange_weak(s->next, s, std::memory_order_release, kRelaxed)) {
    }
  }
  return s;
}

void* start_proxy_step(CommState* c, const EventDescr& d) {
  ProxyOpSlot* op = as_op(c, d.parent);
  if (op == nullptr) return nullptr;  // nothing to attribute the time to
  ProxyStepSlot* s = c->steps.acquire();
  if (s == nullptr) {
    c->drop(DropKind::ProxyStep);
    return nullptr;
  }
  s->h.comm = c;
  s->op = op;
  s->state = kNoState;
  s->since_ns = now_ns();
  s->trans_size = 0;
  s->h.kind.store(Kind::ProxyStep, std::memory_order_release);
  return s;
}

void* start_kernel_ch(CommState* c, const EventDescr& d) {
  CollSlot* parent = as_coll(c, d.parent);
  if (parent == nullptr) return nullptr;
  KernelChSlot* s = c->kernel.acquire();
  if (s == nullptr) {
    c->drop(DropKind::KernelCh);
    return nullptr;
  }
  s->h.comm = c;
  s->parent = parent;
  s->gpu_stopped = false;
  child_started(parent);
  atomic_min(parent->kcpu_min_start, now_ns());
  if (d.has_gpu_timer && d.gpu_timer != 0) atomic_min(parent->gpu_min_start, d.gpu_timer);
  s->h.kind.store(Kind::KernelCh, std::memory_order_release);
  return s;
}

QpStats* find_qp(CommState* c, uint64_t key) {
  const uint32_t n = CommState::kQpTableSize;
  uint32_t i = static_cast<uint32_t>((key * 0x9E3779B97F4A7C15ull) >> 56) % n;
  for (uint32_t probe = 0; probe < n; ++probe, i = (i + 1) % n) {
    uint64_t cur = c->qps[i].key.load(std::memory_order_acquire);
    if (cur == key) return &c->qps[i];
    if (cur == 0 && c->qps[i].key.compare_exchange_strong(cur, key, std::memory_order_acq_rel))
      return &c->qps[i];
    if (cur == key) return &c->qps[i];
  }
  return nullptr;
}

void* start_net(CommState* c, const EventDescr& d) {
  if (d.net_data == nullptr) return nullptr;
  const uint32_t id = static_cast<uint32_t>(d.net_id);
  const uint32_t type = id & NCCL_PROFILER_NET_TYPE_MASK;
  const uint32_t version = id & NCCL_PROFILER_NET_VER_MASK;
  uint64_t key = 0;
  uint64_t length = 0;
  bool railscope = false;
  if (type == NCCL_PROFILER_NET_TYPE_IB && version == 1) {
    const auto* q = static_cast<const ncclProfilerNetIbDescr_v1_t*>(d.net_data);
    if (q->type != ncclProfileQp) return nullptr;
    key = (uint64_t{1} << 62) | (static_cast<uint64_t>(static_cast<uint32_t>(q->qp.device) & 0xFFFF) << 32) |
          static_cast<uint32_t>(q->qp.qpNum);
    length = q->qp.length;
  } else if (type == nccl::kNetTypeRailscope && version == nccl::kNetRailscopeVersion) {
    if (*static_cast<const uint8_t*>(d.net_data) == nccl::kRailscopeNetPort) {
      c->net_ports.note(*static_cast<const nccl::RailscopeNetPort_v1*>(d.net_data));
      return nullptr;  // the start is the whole event: nothing to stop
    }
    const auto* q = static_cast<const nccl::RailscopeNetQp_v1*>(d.net_data);
    key = (uint64_t{2} << 62) | (static_cast<uint64_t>(static_cast<uint32_t>(q->device) & 0xFFFF) << 32) |
          static_cast<uint32_t>(q->qpNum);
    length = q->length;
    railscope = true;
  } else {
    return nullptr;  // a descriptor we cannot interpret: never dereference it
  }
  QpStats* qp = find_qp(c, key + 1);
  NetSlot* s = qp ? c->net.acquire() : nullptr;
  if (s == nullptr) {
    c->drop(DropKind::Net);
    return nullptr;
  }
  qp->wrs.fetch_add(1, kRelaxed);
  qp->bytes.fetch_add(length, kRelaxed);
  s->h.comm = c;
  s->qp = qp;
  s->railscope = railscope;
  s->failed = false;
  s->start_ns = now_ns();
  s->h.kind.store(Kind::Net, std::memory_order_release);
  return s;
}

// Time spent in a ProxyStep state goes to one of three buckets (docs/profile-format.md, waits[]).
void account_state(ProxyOpSlot* op, uint8_t state, uint64_t dt) {
  switch (classify_wait(state)) {
    case WaitKind::PeerLateOrDead: op->peer_ns.fetch_add(dt, kRelaxed); break;
    case WaitKind::NetworkPath: op->net_ns.fetch_add(dt, kRelaxed); break;
    case WaitKind::LocalGpu: op->gpu_ns.fetch_add(dt, kRelaxed); break;
    case WaitKind::Unknown: break;
  }
}

}  // namespace

void start_event(void* ctx, void** handle, const EventDescr& d) {
  if (handle == nullptr) return;
  *handle = nullptr;
  auto* c = static_cast<CommState*>(ctx);
  if (c == nullptr) return;
  switch (d.type) {
    case ncclProfileCollApi:
    case ncclProfileP2pApi: *handle = start_api(d); break;
    case ncclProfileColl: *handle = start_coll(c, d, false); break;
    case ncclProfileP2p: *handle = start_coll(c, d, true); break;
    case ncclProfileProxyOp: *handle = start_proxy_op(c, d); break;
    case ncclProfileProxyStep: *handle = start_proxy_step(c, d); break;
    case ncclProfileKernelCh: *handle = start_kernel_ch(c, d); break;
    case ncclProfileNetPlugin: *handle = start_net(c, d); break;
    default: break;  // Group, GroupApi, KernelLaunch, ProxyCtrl, CE events: not tracked
  }
}

void stop_event(void* handle) {
  if (handle == nullptr) return;
  auto* h = static_cast<EventHeader*>(handle);
  switch (h->kind.load(std::memory_order_acquire)) {
    case Kind::Api: break;  // a static marker: nothing to release
    case Kind::Coll:
    case Kind::P2p: {
      auto* s = static_cast<CollSlot*>(handle);
      if (s->stopped.exchange(true, std::memory_order_acq_rel)) break;  // stopped twice: ignore
      const uint64_t now = now_ns();
      s->stop_ns.store(now, kRelaxed);
      if (!h->comm->expects_children()) atomic_max(s->last_child_stop_ns, now);
      maybe_complete(s, now);
      break;
    }
    case Kind::ProxyOp: {
      auto* s = static_cast<ProxyOpSlot*>(handle);
      if (s->stopped.exchange(true, std::memory_order_acq_rel)) break;
      s->cur_state.store(kNoState, kRelaxed);
      if (s->parent != nullptr) {
        child_stopped(s->parent, now_ns());
      } else {  // detached: nothing refers to it any more
        s->h.kind.store(Kind::None, std::memory_order_release);
        h->comm->ops.release(s);
      }
      break;
    }
    case Kind::ProxyStep: {
      auto* s = static_cast<ProxyStepSlot*>(handle);
      ProxyOpSlot* op = s->op;
      const uint64_t now = now_ns();
      if (s->state != kNoState) account_state(op, s->state, elapsed_ns(now, s->since_ns));
      op->steps.fetch_add(1, kRelaxed);
      op->bytes.fetch_add(s->trans_size, kRelaxed);
      op->cur_state.store(kNoState, kRelaxed);
      s->h.kind.store(Kind::None, std::memory_order_release);
      h->comm->steps.release(s);
      break;
    }
    case Kind::KernelCh: {
      auto* s = static_cast<KernelChSlot*>(handle);
      CollSlot* parent = s->parent;
      const uint64_t now = now_ns();
      atomic_max(parent->kcpu_max_stop, now);
      s->h.kind.store(Kind::None, std::memory_order_release);
      h->comm->kernel.release(s);
      parent->kernel_stops.fetch_add(1, kRelaxed);
      child_stopped(parent, now);
      break;
    }
    case Kind::Net: {
      auto* s = static_cast<NetSlot*>(handle);
      const uint64_t lat = elapsed_ns(now_ns(), s->start_ns);
      s->qp->completions.fetch_add(1, kRelaxed);
      s->qp->lat_sum_ns.fetch_add(lat, kRelaxed);
      atomic_max(s->qp->lat_max_ns, lat);
      s->h.kind.store(Kind::None, std::memory_order_release);
      h->comm->net.release(s);
      break;
    }
    case Kind::None: break;  // stale or foreign handle
  }
}

void record_state(void* handle, int state, uint64_t value, void* data) {
  if (handle == nullptr) return;
  auto* h = static_cast<EventHeader*>(handle);
  switch (h->kind.load(std::memory_order_acquire)) {
    case Kind::ProxyStep: {
      auto* s = static_cast<ProxyStepSlot*>(handle);
      if (state < ncclProfilerProxyStepSendGPUWait ||
          (state > ncclProfilerProxyStepRecvGPUWait && state != ncclProfilerProxyStepSendPeerWait_v4))
        break;
      const uint64_t now = now_ns();
      if (s->state != kNoState) account_state(s->op, s->state, elapsed_ns(now, s->since_ns));
      s->state = static_cast<uint8_t>(state);
      s->since_ns = now;
      if (value > s->trans_size) s->trans_size = value;
      s->op->cur_state.store(static_cast<uint8_t>(state), kRelaxed);
      s->op->cur_since_ns.store(now, kRelaxed);
      break;
    }
    case Kind::ProxyOp: {  // v1..v3 ProxyOp states: only remembered for the watchdog
      auto* s = static_cast<ProxyOpSlot*>(handle);
      if (state >= ncclProfilerProxyOpSendPosted && state <= ncclProfilerProxyOpRecvDone) {
        s->cur_state.store(static_cast<uint8_t>(state), kRelaxed);
        s->cur_since_ns.store(now_ns(), kRelaxed);
      }
      break;
    }
    case Kind::KernelCh: {
      auto* s = static_cast<KernelChSlot*>(handle);
      if (state == ncclProfilerKernelChStop && value != 0 && !s->gpu_stopped) {
        s->gpu_stopped = true;
        atomic_max(s->parent->gpu_max_stop, value);
      }
      break;
    }
    case Kind::Net: {
      auto* s = static_cast<NetSlot*>(handle);
      if (state != ncclProfilerNetPluginUpdate || !s->railscope || data == nullptr || s->failed) break;
      const auto* done = static_cast<const nccl::RailscopeNetCompletion_v1*>(data);
      if (done->status == 0) break;
      s->failed = true;
      s->qp->errors.fetch_add(1, kRelaxed);
      NetError e;
      e.diag_id = done->diag_id;
      e.status = done->status;
      e.vendor_err = done->vendorErr;
      const uint64_t key = s->qp->key.load(kRelaxed) - 1;
      e.device = static_cast<int>((key >> 32) & 0xFFFF);
      e.qp = static_cast<int>(key & 0xFFFFFFFF);
      e.peer = done->peerRank;
      e.mono_ns = now_ns();
      if (!h->comm->net_errors.push(e)) h->comm->drop(DropKind::Queue);
      break;
    }
    default: break;
  }
}

}  // namespace railscope::profiler
