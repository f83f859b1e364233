// SPDX-License-Identifier: Apache-2.0
// Everything the profiler keeps per communicator: identity, the fixed event pools (sized once at
// init from the RAILSCOPE_PROFILE_POOL_* variables), the per-QP table fed by NetPlugin events,
// drop counters, a bounded ring of transport errors and the ports the net plugin named, for the
// monitor thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "plugin/profiler/core/event_pool.h"
#include "plugin/profiler/core/events.h"
#include "plugin/profiler/core/monitor_state.h"
#include "plugin/profiler/core/net_ports_seen.h"

namespace railscope::profiler {

enum class DropKind : uint8_t { Coll, P2p, ProxyOp, ProxyStep, KernelCh, Net, Queue, Count };
inline constexpr const char* kDropNames[] = {"coll",      "p2p", "proxy_op", "proxy_step",
                                             "kernel_ch", "net", "queue"};

struct CommIdentity {
  uint64_t hash = 0;
  std::string name;
  int rank = -1;
  int nranks = 0;  // 0 = unknown (ABI v1..v3)
  int nnodes = 0;
  int abi = 0;
};

struct PoolSizes {
  uint32_t colls = 256;
  uint32_t proxy = 4096;
};

// A transport error reported by the net plugin, queued for the monitor thread.
struct NetError {
  const char* diag_id = nullptr;  // static catalogue string
  int status = 0;
  int vendor_err = 0;
  int device = 0;
  int qp = 0;
  int peer = -1;
  uint64_t mono_ns = 0;
};

// Bounded multi-producer queue (Vyukov): push never blocks, fails when full.
class NetErrorRing {
 public:
  static constexpr uint32_t kSize = 256;
  NetErrorRing() {
    for (uint32_t i = 0; i < kSize; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
  }
  bool push(const NetError& e) {
    uint32_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& c = cells_[pos % kSize];
      const uint32_t seq = c.seq.load(std::memory_order_acquire);
      const int32_t diff = static_cast<int32_t>(seq - pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          c.value = e;
          c.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }
  bool pop(NetError* out) {  // single consumer (the monitor)
    Cell& c = cells_[head_ % kSize];
    if (c.seq.load(std::memory_order_acquire) != head_ + 1) return false;
    *out = c.value;
    c.seq.store(head_ + kSize, std::memory_order_release);
    ++head_;
    return true;
  }

 private:
  struct Cell {
    std::atomic<uint32_t> seq{0};
    NetError value;
  };
  std::array<Cell, kSize> cells_;
  std::atomic<uint32_t> tail_{0};
  uint32_t head_ = 0;
};

struct CommState {
  CommState(CommIdentity id, int activation_mask, PoolSizes sizes)
      : ident(std::move(id)),
        mask(activation_mask),
        colls(sizes.colls),
        ops(sizes.proxy),
        steps(sizes.proxy),
        kernel(sizes.proxy / 4 + 64),
        net(sizes.proxy) {}

  CommIdentity ident;
  int mask;
  EventPool<CollSlot> colls;
  EventPool<ProxyOpSlot> ops;
  EventPool<ProxyStepSlot> steps;
  EventPool<KernelChSlot> kernel;
  EventPool<NetSlot> net;

  static constexpr uint32_t kQpTableSize = 256;
  std::array<QpStats, kQpTableSize> qps;
  NetErrorRing net_errors;
  NetPortsSeen net_ports;  // railscope's net plugin: the ports this communicator's connections use

  std::atomic<uint64_t> p2p_seq{0};
  // Every rank calls a communicator's collectives in the same order (NCCL requires it), so the n-th
  // collective started here is the n-th on every rank: the key that matches one collective across ranks.
  std::atomic<uint64_t> coll_ord{0};
  std::atomic<uint64_t> pxn_proxy_ops{0};
  std::array<std::atomic<uint64_t>, static_cast<size_t>(DropKind::Count)> dropped{};

  void drop(DropKind k) { dropped[static_cast<size_t>(k)].fetch_add(1, std::memory_order_relaxed); }
  bool expects_children() const { return (mask & ((1 << 3) | (1 << 6))) != 0; }  // ProxyOp | KernelCh
  bool tracks_kernel() const { return (mask & (1 << 6)) != 0; }

  // Owned by the monitor thread (under its lock).
  MonitorCommState monitor;
};

}  // namespace railscope::profiler
