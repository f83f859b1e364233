// SPDX-License-Identifier: Apache-2.0
// Drives the built profiler plugin through one ABI version exactly as NCCL would: loaded with the
// harness (dlopen + the versioned symbol), descriptors laid out per version, events in NCCL's
// order (CollApi → Coll → ProxyOp → ProxyStep/NetPlugin, KernelCh). Synthetic timestamps go in
// through KernelCh GPU timers so the bandwidth arithmetic can be checked exactly.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "abi/plugin_loader.h"
#include "railscope/nccl/profiler.h"

namespace railscope::abi_test {

struct CollSpec {
  const char* func = "AllReduce";
  const char* datatype = "ncclFloat32";
  uint64_t count = 1024;
  uint64_t seq = 0;
  int root = -1;
  int channels = 2;
  const char* algo = "RING";
  const char* proto = "SIMPLE";
  bool graph = false;
};

class ProfilerDriver {
 public:
  explicit ProfilerDriver(int version);
  bool loaded() const { return static_cast<bool>(plugin_); }
  const std::string& load_error() const { return plugin_.error; }
  int version() const { return version_; }
  int mask() const { return mask_; }
  void* ctx() const { return ctx_; }

  ncclResult_t init(uint64_t hash, int rank, int nranks, int nnodes, const char* name = "test");
  ncclResult_t finalize();

  // Coll (v5+: after a CollApi event that is already stopped, as NCCL does).
  void* start_coll(const CollSpec& spec);
  void* start_p2p(const char* func, const char* datatype, uint64_t count, int peer, int channels);
  void* start_proxy_op(void* parent, int channel, int peer, bool is_send, pid_t pid = 0);
  void* start_proxy_step(void* op, int step);
  void* start_kernel_ch(void* parent, int channel, uint64_t gpu_start_ns);
  void* start_net(void* step, int64_t plugin_id, void* data);
  void state(void* handle, ncclProfilerEventState_t s, uint64_t value = 0, void* data = nullptr);
  void stop(void* handle);

  // Raw entry points for NULL/garbage tests.
  ncclResult_t raw_start(void* ctx, void** handle, void* descr);
  ncclResult_t raw_stop(void* handle);
  ncclResult_t raw_record(void* handle, int state, void* args);
  ncclResult_t raw_finalize(void* ctx);

  // One complete collective: Coll start/stop (enqueue), per channel a send and a recv ProxyOp with
  // `steps` ProxySteps (SendGPUWait→SendPeerWait→SendWait / RecvWait→RecvFlushWait→RecvGPUWait),
  // and KernelCh events whose GPU timers span exactly gpu_ns.
  void run_coll(const CollSpec& spec, uint64_t gpu_ns, int peer = 1, int steps = 2);
  // Ring shape for multi-rank runs: send to send_peer, receive from recv_peer, and spend
  // recv_wait_us (real time) in RecvWait of each receive step (waiting for a late peer).
  void run_ring_coll(const CollSpec& spec, uint64_t gpu_ns, int send_peer, int recv_peer, int recv_wait_us);
  void run_p2p(const char* func, uint64_t count, int peer, uint64_t gpu_ns);

 private:
  void* start(void* descr);
  int version_;
  LoadedPlugin plugin_;
  void* ctx_ = nullptr;
  int mask_ = 0;
  int rank_ = -1;
  uint64_t gpu_clock_ = 1'000'000'000;
};

// Fresh empty directory under /tmp; also exported as RAILSCOPE_PROFILE_DIR.
std::string fresh_profile_dir(const std::string& stem);
// Every JSON line of every *.jsonl file in dir, in file order (as raw text).
std::vector<std::string> read_profile_lines(const std::string& dir);

}  // namespace railscope::abi_test
