// SPDX-License-Identifier: Apache-2.0
// Cost of the profiler on NCCL's threads, measured through the ABI (the plugin dlopen'ed as NCCL
// does). Run under callgrind by run.sh: each phase is bracketed with callgrind client requests and
// dumped separately, so instructions per event = phase total / iterations. Without valgrind it
// prints wall-clock ns per event instead.
#include <valgrind/callgrind.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "abi/plugin_loader.h"
#include "railscope/nccl/profiler.h"

using railscope::abi_test::LoadedPlugin;
using railscope::abi_test::NcclRelease;
using railscope::abi_test::PluginKind;

namespace {

constexpr int kIterations = 20000;

ncclResult_t noop_stop(void*) { return ncclSuccess; }

template <typename F>
void phase(const char* name, F&& body) {
  const auto t0 = std::chrono::steady_clock::now();
  CALLGRIND_TOGGLE_COLLECT;
  body();
  CALLGRIND_TOGGLE_COLLECT;
  CALLGRIND_DUMP_STATS_AT(name);
  const auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  std::printf("phase %s iterations %d wall_ns_per_iteration %.1f\n", name, kIterations, ns / kIterations);
}

}  // namespace

int main() {
  setenv("RAILSCOPE_PROFILE_POOL_COLLS", "65536", 1);
  setenv("RAILSCOPE_PROFILE_DIR", "/tmp/railscope-profiler-cost", 1);
  LoadedPlugin p = railscope::abi_test::load(PluginKind::Profiler,
                                             railscope::abi_test::built_plugin_path(PluginKind::Profiler),
                                             NcclRelease::V2_28_9, 5);
  if (!p) {
    std::fprintf(stderr, "cannot load the profiler plugin: %s\n", p.error.c_str());
    return 1;
  }
  auto* t = static_cast<ncclProfiler_v5_t*>(p.table);
  void* ctx = nullptr;
  int mask = 0;
  if (t->init(&ctx, 0x1, &mask, "bench", 2, 16, 0, nullptr) != ncclSuccess) return 1;

  ncclProfilerEventDescr_v5_t coll;
  std::memset(&coll, 0, sizeof coll);
  coll.type = ncclProfileColl;
  coll.coll.func = "AllReduce";
  coll.coll.datatype = "ncclFloat32";
  coll.coll.count = 1 << 20;
  coll.coll.nChannels = 4;
  coll.coll.algo = "RING";
  coll.coll.proto = "SIMPLE";

  // Baseline: the same loop calling a no-op through a function pointer (subtracted by run.sh).
  volatile auto stop_fn = &noop_stop;
  phase("baseline", [&] {
    for (int i = 0; i < kIterations; ++i) {
      stop_fn(nullptr);
      stop_fn(nullptr);
    }
  });

  phase("coll_start_stop", [&] {
    for (int i = 0; i < kIterations; ++i) {
      void* h = nullptr;
      coll.coll.seqNumber = static_cast<uint64_t>(i);
      t->startEvent(ctx, &h, &coll);
      t->stopEvent(h);
    }
  });

  // One ProxyOp with one long ProxyStep; NCCL records a state per transition.
  ncclProfilerEventDescr_v5_t d;
  std::memset(&d, 0, sizeof d);
  void* parent = nullptr;
  t->startEvent(ctx, &parent, &coll);
  d.type = ncclProfileProxyOp;
  d.parentObj = parent;
  d.proxyOp = {0, 0, 1, 8, 1 << 20, 1};
  void* op = nullptr;
  t->startEvent(ctx, &op, &d);
  std::memset(&d, 0, sizeof d);
  d.type = ncclProfileProxyStep;
  d.parentObj = op;
  void* step = nullptr;
  t->startEvent(ctx, &step, &d);
  ncclProfilerEventStateArgs_v5_t args;
  args.proxyStep.transSize = 4096;
  phase("proxystep_state", [&] {
    for (int i = 0; i < kIterations; ++i) {
      t->recordEventState(
          step, (i & 1) ? ncclProfilerProxyStepSendWait : ncclProfilerProxyStepSendPeerWait_v4, &args);
      stop_fn(nullptr);  // same loop shape as the baseline (one extra indirect call)
    }
  });
  t->stopEvent(step);
  t->stopEvent(op);
  t->stopEvent(parent);
  t->finalize(ctx);
  return 0;
}
