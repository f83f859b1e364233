// SPDX-License-Identifier: Apache-2.0
// One rank of a fake job for the monitoring end-to-end test (monitoring_e2e.py): the real profiler plugin,
// loaded through its ABI, sees a two-rank communicator and this rank's collectives, and writes its textfile
// (RAILSCOPE_PROFILE_PROM, labels from RANK, LOCAL_RANK and RAILSCOPE_PROFILE_TAG as a launcher sets them).
// Usage: monitoring_rank RANK MODE SECONDS, MODE one of
//   progress  a collective every 50 ms for SECONDS;
//   stop      a few collectives, then nothing (a rank stuck outside NCCL);
//   wait      a few collectives, then one that never completes (a rank waiting for the stopped one).
// Finalizes after SECONDS (or at SIGTERM), so the profiler removes its textfile.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "abi/profiler/profiler_driver.h"

namespace {

std::atomic<bool> g_stop{false};
void on_term(int) { g_stop = true; }

}  // namespace

int main(int argc, char** argv) {
  using railscope::abi_test::CollSpec;
  using railscope::abi_test::ProfilerDriver;
  if (argc != 4) {
    std::fprintf(stderr, "usage: monitoring_rank RANK progress|stop|wait SECONDS\n");
    return 2;
  }
  const int rank = std::atoi(argv[1]);
  const std::string mode = argv[2];
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(std::atoi(argv[3]));
  std::signal(SIGTERM, on_term);
  ProfilerDriver drv(6);
  if (!drv.loaded()) {
    std::fprintf(stderr, "monitoring_rank: %s\n", drv.load_error().c_str());
    return 3;
  }
  if (drv.init(0x5eed, rank, 2, 1, "world") != 0) return 4;
  uint64_t seq = 0;
  auto one = [&] {
    CollSpec s;
    s.seq = seq++;
    drv.run_coll(s, 20'000, 1 - rank);
  };
  for (int i = 0; i < 5; ++i) one();
  void* stuck = nullptr;
  void* receive = nullptr;  // waits for the peer's data, which never comes
  if (mode == "wait") {
    stuck = drv.start_coll(CollSpec{.seq = seq});
    receive = drv.start_proxy_op(stuck, 0, 1 - rank, false);
  }
  while (!g_stop && std::chrono::steady_clock::now() < until) {
    if (mode == "progress") one();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (receive != nullptr) drv.stop(receive);
  return drv.finalize() == 0 ? 0 : 5;
}
