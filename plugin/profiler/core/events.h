// SPDX-License-Identifier: Apache-2.0
// The profiler's internal model: one version-independent event descriptor (what every ABI adapter
// translates NCCL's descriptor into) and the slots that live in the per-communicator pools. A
// handle given to NCCL is a pointer to a slot; every slot starts with an EventHeader whose kind
// says which pool it belongs to.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>

#include "plugin/profiler/core/bandwidth.h"

namespace railscope::profiler {

struct CommState;

enum class Kind : uint8_t { None, Api, Coll, P2p, ProxyOp, ProxyStep, KernelCh, Net };

// Version-independent view of a start event (filled by the abi/ adapters).
struct EventDescr {
  uint64_t type = 0;  // one ncclProfile* bit
  void* parent = nullptr;
  int rank = -1;
  // Coll / P2p
  Op op = Op::Unknown;
  const char* datatype = nullptr;
  const char* algo = nullptr;
  const char* proto = nullptr;
  uint64_t seq = 0;
  bool has_seq = false;
  uint64_t count = 0;
  int root = -1;
  int peer = -1;
  int channels = 0;
  // CollApi / P2pApi: -1 unknown, 0 no, 1 captured in a CUDA graph
  int8_t graph = -1;
  // ProxyOp
  pid_t pid = 0;
  int channel = 0;
  int nsteps = 0;
  bool is_send = false;
  // KernelCh
  uint64_t gpu_timer = 0;
  bool has_gpu_timer = false;
  // NetPlugin
  int64_t net_id = 0;
  void* net_data = nullptr;
};

// ProxyStep / ProxyOp state as remembered for the watchdog (NCCL's state numbers; kNoState = none).
inline constexpr uint8_t kNoState = 0xFF;

struct EventHeader {
  std::atomic<Kind> kind{Kind::None};
  CommState* comm = nullptr;
};

// CollApi/P2pApi events carry only "captured in a CUDA graph", which the Coll below needs. NCCL
// stops the API event before it starts the Coll (and still passes the API handle as its parent),
// so the handle is one of two static markers rather than a pooled slot that could be recycled.
struct ApiSlot {
  EventHeader h;
  int8_t graph = -1;
};

struct CollSlot;

struct ProxyOpSlot {
  EventHeader h;
  CollSlot* parent = nullptr;   // nullptr: detached (PXN op from another process, or no parent)
  ProxyOpSlot* next = nullptr;  // in the parent's list
  int channel = 0;
  int peer = -1;
  bool is_send = false;
  std::atomic<uint64_t> peer_ns{0};
  std::atomic<uint64_t> net_ns{0};
  std::atomic<uint64_t> gpu_ns{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint32_t> steps{0};
  std::atomic<uint8_t> cur_state{kNoState};
  std::atomic<uint64_t> cur_since_ns{0};
  std::atomic<bool> stopped{false};
};

struct CollSlot {
  EventHeader h;
  // Written once at start (before the handle is published to NCCL).
  Op op = Op::Unknown;
  const char* datatype = nullptr;
  const char* algo = nullptr;
  const char* proto = nullptr;
  uint64_t seq = 0;
  uint64_t ord = 0;  // collectives only: the communicator's ordinal over all of them
  uint64_t count = 0;
  int root = -1;
  int peer = -1;
  int channels = 0;
  int rank = -1;
  int8_t graph = -1;
  uint64_t start_ns = 0;  // monotonic
  // Updated by NCCL's threads.
  std::atomic<bool> stopped{false};
  std::atomic<uint64_t> stop_ns{0};   // enqueue-time stop
  std::atomic<int> alive{0};          // children started and not stopped
  std::atomic<int> children_seen{0};  // children ever started
  std::atomic<int> kernel_stops{0};
  std::atomic<uint64_t> last_child_stop_ns{0};
  std::atomic<uint64_t> candidate_ns{0};  // when it last looked complete (0 = not complete)
  std::atomic<uint64_t> gpu_min_start{UINT64_MAX};
  std::atomic<uint64_t> gpu_max_stop{0};
  std::atomic<uint64_t> kcpu_min_start{UINT64_MAX};
  std::atomic<uint64_t> kcpu_max_stop{0};
  std::atomic<ProxyOpSlot*> ops_head{nullptr};
  // Owned by the monitor thread.
  bool hang_reported = false;
};

struct ProxyStepSlot {
  EventHeader h;
  ProxyOpSlot* op = nullptr;
  uint8_t state = kNoState;
  uint64_t since_ns = 0;
  uint64_t trans_size = 0;
};

struct KernelChSlot {
  EventHeader h;
  CollSlot* parent = nullptr;
  bool gpu_stopped = false;
};

struct QpStats {
  std::atomic<uint64_t> key{0};  // 0 = empty; else (source << 62) | (device << 32) | qpNum, +1
  std::atomic<uint64_t> wrs{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> completions{0};
  std::atomic<uint64_t> lat_sum_ns{0};
  std::atomic<uint64_t> lat_max_ns{0};
  std::atomic<uint64_t> errors{0};
};

struct NetSlot {
  EventHeader h;
  QpStats* qp = nullptr;
  uint64_t start_ns = 0;
  bool railscope = false;
  bool failed = false;
};

}  // namespace railscope::profiler
