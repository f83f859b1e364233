// SPDX-License-Identifier: Apache-2.0
#include "abi/profiler/profiler_driver.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace railscope::abi_test {
namespace {

union AnyDescr {
  ncclProfilerEventDescr_v1_t v1;
  ncclProfilerEventDescr_v2_t v2;
  ncclProfilerEventDescr_v3_t v3;
  ncclProfilerEventDescr_v4_t v4;
  ncclProfilerEventDescr_v5_t v5;
  ncclProfilerEventDescr_v6_t v6;
};

union AnyArgs {
  ncclProfilerEventStateArgs_v1_t v1;
  ncclProfilerEventStateArgs_v4_t v4;
};

// All versions share the function-table layout except init; these are the common slots.
struct CommonTable {
  const char* name;
  void* init;
  ncclResult_t (*startEvent)(void*, void**, void*);
  ncclResult_t (*stopEvent)(void*);
  ncclResult_t (*recordEventState)(void*, int, void*);
  ncclResult_t (*finalize)(void*);
};

uint8_t func_number(const char* f) {
  const std::string s = f;
  if (s == "Broadcast") return 0;
  if (s == "Reduce") return 1;
  if (s == "AllGather") return 2;
  if (s == "ReduceScatter") return 3;
  if (s == "AllReduce") return 4;
  if (s == "Send") return 6;
  if (s == "Recv") return 7;
  if (s == "AlltoAll") return 8;
  return 5;
}
uint8_t datatype_number(const char* d) {
  const std::string s = d;
  if (s == "ncclInt8") return 0;
  if (s == "ncclFloat16") return 6;
  if (s == "ncclFloat32") return 7;
  if (s == "ncclFloat64") return 8;
  if (s == "ncclBfloat16") return 9;
  return 2;
}

// v4/v5/v6 share the descriptor union layout; fill the bits common to them.
template <typename D>
void fill_modern_coll(D& d, const CollSpec& s) {
  d.coll.seqNumber = s.seq;
  d.coll.func = s.func;
  d.coll.count = s.count;
  d.coll.root = s.root;
  d.coll.datatype = s.datatype;
  d.coll.nChannels = static_cast<uint8_t>(s.channels);
  d.coll.nWarps = 8;
  d.coll.algo = s.algo;
  d.coll.proto = s.proto;
}

}  // namespace

ProfilerDriver::ProfilerDriver(int version)
    : version_(version),
      plugin_(
          load(PluginKind::Profiler, built_plugin_path(PluginKind::Profiler), NcclRelease::V2_30, version)) {}

ncclResult_t ProfilerDriver::init(uint64_t hash, int rank, int nranks, int nnodes, const char* name) {
  void* t = plugin_.table;
  rank_ = rank;
  switch (version_) {
    case 1: return static_cast<ncclProfiler_v1_t*>(t)->init(&ctx_, &mask_);
    case 2: return static_cast<ncclProfiler_v2_t*>(t)->init(&ctx_, &mask_);
    case 3: return static_cast<ncclProfiler_v3_t*>(t)->init(&ctx_, &mask_);
    case 4:
      return static_cast<ncclProfiler_v4_t*>(t)->init(&ctx_, &mask_, name, hash, nnodes, nranks, rank,
                                                      CapturedLog::logger);
    case 5:
      return static_cast<ncclProfiler_v5_t*>(t)->init(&ctx_, hash, &mask_, name, nnodes, nranks, rank,
                                                      CapturedLog::logger);
    case 6:
      return static_cast<ncclProfiler_v6_t*>(t)->init(&ctx_, hash, &mask_, name, nnodes, nranks, rank,
                                                      CapturedLog::logger);
    default: return ncclInvalidArgument;
  }
}

ncclResult_t ProfilerDriver::finalize() {
  const ncclResult_t r = raw_finalize(ctx_);
  ctx_ = nullptr;
  return r;
}

ncclResult_t ProfilerDriver::raw_start(void* ctx, void** handle, void* descr) {
  return static_cast<CommonTable*>(plugin_.table)->startEvent(ctx, handle, descr);
}
ncclResult_t ProfilerDriver::raw_stop(void* handle) {
  return static_cast<CommonTable*>(plugin_.table)->stopEvent(handle);
}
ncclResult_t ProfilerDriver::raw_record(void* handle, int s, void* args) {
  return static_cast<CommonTable*>(plugin_.table)->recordEventState(handle, s, args);
}
ncclResult_t ProfilerDriver::raw_finalize(void* ctx) {
  return static_cast<CommonTable*>(plugin_.table)->finalize(ctx);
}

void* ProfilerDriver::start(void* descr) {
  // Every version has `int rank` at offset 16 of the descriptor; NCCL fills it with the comm rank.
  static_assert(offsetof(ncclProfilerEventDescr_v1_t, rank) == 16 &&
                offsetof(ncclProfilerEventDescr_v5_t, rank) == 16);
  std::memcpy(static_cast<char*>(descr) + 16, &rank_, sizeof rank_);
  void* h = nullptr;
  raw_start(ctx_, &h, descr);
  return h;
}

void* ProfilerDriver::start_coll(const CollSpec& s) {
  AnyDescr d;
  std::memset(&d, 0, sizeof d);
  switch (version_) {
    case 1:
      d.v1.type = ncclProfileColl;
      d.v1.coll.seqNumber = s.seq;
      d.v1.coll.func = func_number(s.func);
      d.v1.coll.count = s.count;
      d.v1.coll.root = s.root;
      d.v1.coll.datatype = datatype_number(s.datatype);
      d.v1.coll.nMaxChannels = static_cast<uint8_t>(s.channels);
      d.v1.coll.algo = 1;   // RING
      d.v1.coll.proto = 2;  // SIMPLE
      break;
    case 2:
      d.v2.type = ncclProfileColl;
      d.v2.coll.seqNumber = s.seq;
      d.v2.coll.func = s.func;
      d.v2.coll.count = s.count;
      d.v2.coll.root = s.root;
      d.v2.coll.datatype = s.datatype;
      d.v2.coll.nMaxChannels = static_cast<uint8_t>(s.channels);
      d.v2.coll.algo = s.algo;
      d.v2.coll.proto = s.proto;
      break;
    case 3:
      d.v3.type = ncclProfileColl;
      d.v3.coll.seqNumber = s.seq;
      d.v3.coll.func = s.func;
      d.v3.coll.count = s.count;
      d.v3.coll.root = s.root;
      d.v3.coll.datatype = s.datatype;
      d.v3.coll.nMaxChannels = static_cast<uint8_t>(s.channels);
      d.v3.coll.algo = s.algo;
      d.v3.coll.proto = s.proto;
      break;
    case 4:
      d.v4.type = ncclProfileColl;
      fill_modern_coll(d.v4, s);
      break;
    case 5:
    case 6: {
      // CollApi first; NCCL stops it when the API call returns, before the Coll event starts.
      AnyDescr api;
      std::memset(&api, 0, sizeof api);
      api.v5.type = ncclProfileCollApi;
      api.v5.collApi.func = s.func;
      api.v5.collApi.count = s.count;
      api.v5.collApi.datatype = s.datatype;
      api.v5.collApi.root = s.root;
      api.v5.collApi.graphCaptured = s.graph;
      void* api_handle = start(&api);
      stop(api_handle);
      d.v5.type = ncclProfileColl;
      d.v5.parentObj = api_handle;
      fill_modern_coll(d.v5, s);
      break;
    }
    default: return nullptr;
  }
  return start(&d);
}

void* ProfilerDriver::start_p2p(const char* func, const char* datatype, uint64_t count, int peer,
                                int channels) {
  AnyDescr d;
  std::memset(&d, 0, sizeof d);
  switch (version_) {
    case 1:
      d.v1.type = ncclProfileP2p;
      d.v1.p2p.func = func_number(func);
      d.v1.p2p.datatype = datatype_number(datatype);
      d.v1.p2p.count = count;
      d.v1.p2p.peer = peer;
      break;
    case 2:
    case 3:  // v2 and v3 p2p layouts are identical
      d.v2.type = ncclProfileP2p;
      d.v2.p2p.func = func;
      d.v2.p2p.datatype = datatype;
      d.v2.p2p.count = count;
      d.v2.p2p.peer = peer;
      break;
    case 4:
      d.v4.type = ncclProfileP2p;
      d.v4.p2p.func = func;
      d.v4.p2p.datatype = datatype;
      d.v4.p2p.count = count;
      d.v4.p2p.peer = peer;
      d.v4.p2p.nChannels = static_cast<uint8_t>(channels);
      break;
    default:
      d.v5.type = ncclProfileP2p;
      d.v5.p2p.func = func;
      d.v5.p2p.datatype = datatype;
      d.v5.p2p.count = count;
      d.v5.p2p.peer = peer;
      d.v5.p2p.nChannels = static_cast<uint8_t>(channels);
      break;
  }
  return start(&d);
}

void* ProfilerDriver::start_proxy_op(void* parent, int channel, int peer, bool is_send, pid_t pid) {
  AnyDescr d;
  std::memset(&d, 0, sizeof d);
  ncclProfilerProxyOpDescr op{
      pid != 0 ? pid : getpid(), static_cast<uint8_t>(channel), peer, 4, 1 << 20, is_send ? 1 : 0};
  if (version_ <= 3) {
    d.v1.type = ncclProfileProxyOp;
    d.v1.parentObj = parent;
    d.v1.proxyOp = op;  // same position in v1..v3
  } else if (version_ == 4) {
    d.v4.type = ncclProfileProxyOp;
    d.v4.parentObj = parent;
    d.v4.proxyOp = op;
  } else {
    d.v5.type = ncclProfileProxyOp;
    d.v5.parentObj = parent;
    d.v5.proxyOp = op;
  }
  return start(&d);
}

void* ProfilerDriver::start_proxy_step(void* op, int step) {
  AnyDescr d;
  std::memset(&d, 0, sizeof d);
  if (version_ <= 3) {
    d.v1.type = ncclProfileProxyStep;
    d.v1.parentObj = op;
    d.v1.proxyStep.step = step;
  } else if (version_ == 4) {
    d.v4.type = ncclProfileProxyStep;
    d.v4.parentObj = op;
    d.v4.proxyStep.step = step;
  } else {
    d.v5.type = ncclProfileProxyStep;
    d.v5.parentObj = op;
    d.v5.proxyStep.step = step;
  }
  return start(&d);
}

void* ProfilerDriver::start_kernel_ch(void* parent, int channel, uint64_t gpu_start_ns) {
  if (version_ < 3) return nullptr;  // no KernelCh before v3
  AnyDescr d;
  std::memset(&d, 0, sizeof d);
  if (version_ == 3) {
    d.v3.type = ncclProfileKernelCh;
    d.v3.parentObj = parent;
    d.v3.kernelCh.channelId = static_cast<uint8_t>(channel);
  } else if (version_ == 4) {
    d.v4.type = ncclProfileKernelCh;
    d.v4.parentObj = parent;
    d.v4.kernelCh = {static_cast<uint8_t>(channel), gpu_start_ns};
  } else {
    d.v5.type = ncclProfileKernelCh;
    d.v5.parentObj = parent;
    d.v5.kernelCh = {static_cast<uint8_t>(channel), gpu_start_ns};
  }
  return start(&d);
}

void* ProfilerDriver::start_net(void* step, int64_t plugin_id, void* data) {
  if (version_ < 3) return nullptr;
  AnyDescr d;
  std::memset(&d, 0, sizeof d);
  if (version_ == 3) {
    d.v3.type = ncclProfileNetPlugin;
    d.v3.parentObj = step;
    d.v3.netPlugin = {plugin_id, data};
  } else if (version_ == 4) {
    d.v4.type = ncclProfileNetPlugin;
    d.v4.parentObj = step;
    d.v4.netPlugin = {plugin_id, data};
  } else {
    d.v5.type = ncclProfileNetPlugin;
    d.v5.parentObj = step;
    d.v5.netPlugin = {plugin_id, data};
  }
  return start(&d);
}

void ProfilerDriver::state(void* handle, ncclProfilerEventState_t s, uint64_t value, void* data) {
  AnyArgs a;
  std::memset(&a, 0, sizeof a);
  if (version_ <= 3) {
    a.v1.proxyOp.transSize = value;
  } else if (s == ncclProfilerKernelChStop) {
    a.v4.kernelCh.pTimer = value;
  } else if (s == ncclProfilerNetPluginUpdate) {
    a.v4.netPlugin.data = data;
  } else {
    a.v4.proxyStep.transSize = value;
  }
  raw_record(handle, s, &a);
}

void ProfilerDriver::stop(void* handle) { raw_stop(handle); }

void ProfilerDriver::run_coll(const CollSpec& spec, uint64_t gpu_ns, int peer, int steps) {
  void* coll = start_coll(spec);
  stop(coll);  // NCCL stops Coll at enqueue time, before any child has run
  const uint64_t t0 = gpu_clock_;
  gpu_clock_ += gpu_ns + 1000;
  std::vector<void*> kernels;
  for (int ch = 0; ch < spec.channels; ++ch)
    kernels.push_back(start_kernel_ch(coll, ch, t0 + static_cast<uint64_t>(ch)));
  for (int ch = 0; ch < spec.channels; ++ch) {
    for (int dir = 0; dir < 2; ++dir) {
      const bool send = dir == 0;
      void* op = start_proxy_op(coll, ch, peer, send);
      for (int s = 0; s < steps; ++s) {
        void* st = start_proxy_step(op, s);
        if (send) {
          state(st, ncclProfilerProxyStepSendGPUWait, 4096);
          state(st, ncclProfilerProxyStepSendPeerWait_v4, 4096);
          state(st, ncclProfilerProxyStepSendWait, 4096);
        } else {
          state(st, ncclProfilerProxyStepRecvWait, 4096);
          state(st, ncclProfilerProxyStepRecvFlushWait, 4096);
          state(st, ncclProfilerProxyStepRecvGPUWait, 4096);
        }
        stop(st);
      }
      stop(op);
    }
  }
  for (int ch = 0; ch < spec.channels; ++ch) {
    state(kernels[static_cast<size_t>(ch)], ncclProfilerKernelChStop, t0 + gpu_ns);
    stop(kernels[static_cast<size_t>(ch)]);
  }
}

void ProfilerDriver::run_ring_coll(const CollSpec& spec, uint64_t gpu_ns, int send_peer, int recv_peer,
                                   int recv_wait_us) {
  void* coll = start_coll(spec);
  stop(coll);
  const uint64_t t0 = gpu_clock_;
  gpu_clock_ += gpu_ns + 1000;
  void* k = start_kernel_ch(coll, 0, t0);
  void* send = start_proxy_op(coll, 0, send_peer, true);
  void* recv = start_proxy_op(coll, 0, recv_peer, false);
  void* ss = start_proxy_step(send, 0);
  state(ss, ncclProfilerProxyStepSendWait, 4096);
  void* rs = start_proxy_step(recv, 0);
  state(rs, ncclProfilerProxyStepRecvWait, 4096);
  if (recv_wait_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(recv_wait_us));
  state(rs, ncclProfilerProxyStepRecvGPUWait, 4096);
  stop(rs);
  stop(ss);
  stop(recv);
  stop(send);
  state(k, ncclProfilerKernelChStop, t0 + gpu_ns);
  stop(k);
}

void ProfilerDriver::run_p2p(const char* func, uint64_t count, int peer, uint64_t gpu_ns) {
  void* p = start_p2p(func, "ncclInt8", count, peer, 1);
  stop(p);
  const uint64_t t0 = gpu_clock_;
  gpu_clock_ += gpu_ns + 1000;
  void* k = start_kernel_ch(p, 0, t0);
  void* op = start_proxy_op(p, 0, peer, std::string(func) == "Send");
  void* st = start_proxy_step(op, 0);
  state(st, std::string(func) == "Send" ? ncclProfilerProxyStepSendWait : ncclProfilerProxyStepRecvWait,
        count);
  stop(st);
  stop(op);
  state(k, ncclProfilerKernelChStop, t0 + gpu_ns);
  stop(k);
}

std::string fresh_profile_dir(const std::string& stem) {
  std::string templ = "/tmp/railscope-" + stem + "-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  setenv("RAILSCOPE_PROFILE_DIR", templ.c_str(), 1);
  return templ;
}

std::vector<std::string> read_profile_lines(const std::string& dir) {
  std::vector<std::string> out;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f);
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) out.push_back(line);
  }
  return out;
}

}  // namespace railscope::abi_test
