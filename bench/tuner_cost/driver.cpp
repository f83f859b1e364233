// SPDX-License-Identifier: Apache-2.0
// Drives the tuner plugin's getCollInfo the way NCCL does (dlopen, the ABI table, a fresh cost table
// per call) so callgrind can count its instructions. Warm-up calls first (every collective × size
// bucket, so the one-time decision logging is done), then callgrind's counters are zeroed and the
// measured calls run. run.sh collects only inside the adapter's getCollInfo.
//
//   tuner_cost_driver [version=5] [nodes=4] [gpus_per_node=8] [calls=20000]
#include <dlfcn.h>
#include <valgrind/callgrind.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "railscope/nccl/tuner.h"

namespace {

void quiet_logger(ncclDebugLogLevel, unsigned long, const char*, int, const char*, ...) {}

struct Table {
  float t[7][3];
  void reset() {
    for (auto& row : t)
      for (float& v : row) v = -1.0f;
    for (int p = 0; p < 3; ++p) {
      t[NCCL_ALGO_TREE][p] = 10.0f + static_cast<float>(p);
      t[NCCL_ALGO_RING][p] = 20.0f + static_cast<float>(p);
    }
  }
};

using GetCollInfo = ncclResult_t (*)(void*, ncclFunc_t, size_t, int, float**, int, int, int, int*);

// One call per iteration, cycling over the five collectives and 8 B ... 16 GiB.
__attribute__((noinline)) long run(GetCollInfo fn, void* ctx, long calls) {
  Table table;
  long zeroed = 0;
  for (long i = 0; i < calls; ++i) {
    table.reset();
    int channels = 0;
    const auto coll = static_cast<ncclFunc_t>(i % 5);
    const size_t bytes = size_t{8} << (i / 5 % 32);
    fn(ctx, coll, bytes, 1, reinterpret_cast<float**>(&table.t[0][0]), 7, 3, 0, &channels);
    for (const auto& row : table.t)
      for (float v : row) zeroed += v == 0.0f;
  }
  return zeroed;
}

}  // namespace

int main(int argc, char** argv) {
  const int version = argc > 1 ? std::atoi(argv[1]) : 5;
  const size_t nodes = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 4;
  const size_t gpus = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 8;
  const long calls = argc > 4 ? std::atol(argv[4]) : 20000;
  if (version < 4 || version > 6) {
    std::fprintf(stderr, "version must be 4, 5 or 6 (the table-editing versions with regBuff)\n");
    return 2;
  }
  // NIC facts so the model (not the "no model, NCCL decides" path) is what gets measured; an
  // environment that already sets them wins.
  setenv("RAILSCOPE_TUNER_NICS", "4", 0);
  setenv("RAILSCOPE_TUNER_NIC_GBPS", "400", 0);
  void* lib = dlopen(RAILSCOPE_TUNER_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  const std::string sym = "ncclTunerPlugin_v" + std::to_string(version);
  void* table = dlsym(lib, sym.c_str());
  if (table == nullptr) {
    std::fprintf(stderr, "no %s\n", sym.c_str());
    return 1;
  }
  void* ctx = nullptr;
  GetCollInfo get = nullptr;
  ncclResult_t r = ncclInternalError;
  if (version == 4) {
    auto* t = static_cast<ncclTuner_v4_t*>(table);
    r = t->init(nodes * gpus, nodes, quiet_logger, &ctx);
    get = t->getCollInfo;
  } else {
    auto* t = static_cast<ncclTuner_v5_t*>(table);  // v6 starts with the same members
    ncclNvlDomainInfo_v5_t nvl{static_cast<int>(nodes), static_cast<int>(gpus), static_cast<int>(gpus)};
    r = t->init(&ctx, 1, nodes * gpus, nodes, quiet_logger, &nvl, nullptr);
    get = t->getCollInfo;
  }
  if (r != ncclSuccess) {
    std::fprintf(stderr, "init failed: %d\n", static_cast<int>(r));
    return 1;
  }
  run(get, ctx, 5 * 32 * 4);  // warm-up: every (collective, size) a few times
  CALLGRIND_ZERO_STATS;
  const auto t0 = std::chrono::steady_clock::now();
  const long zeroed = run(get, ctx, calls);
  const auto t1 = std::chrono::steady_clock::now();
  CALLGRIND_DUMP_STATS_AT("measured");
  const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(calls);
  if (zeroed != calls) std::fprintf(stderr, "warning: only %ld of %ld calls chose an entry\n", zeroed, calls);
  std::printf("calls=%ld chosen=%ld abi=v%d nodes=%zu gpus_per_node=%zu ns_per_call=%.1f\n", calls, zeroed,
              version, nodes, gpus, ns);
  static_cast<ncclTuner_v5_t*>(table)->finalize(ctx);  // same slot as v4's destroy
  dlclose(lib);
  return 0;
}
