// SPDX-License-Identifier: Apache-2.0
// The TCP engine's periodic statistics through the ABI (docs/tcp.md, "Statistics"): with
// RAILSCOPE_NET_STATS_INTERVAL=1 a connection that moves messages writes a "final":false line while it
// lives, an idle one writes nothing more, and close writes the "final":true lines. One process, both
// ends on loopback. A symbolic link at the stats file's name is refused, never appended through.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "abi/net_tcp/net_api.h"

namespace railscope::abi_test {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kDev = 0;

struct Lines {
  int periodic_send = 0, periodic_recv = 0, final_lines = 0;
};

Lines read_lines(const std::string& path) {
  Lines n;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"engine\":\"tcp\"") == std::string::npos) continue;
    if (line.find("\"final\":true") != std::string::npos) {
      ++n.final_lines;
    } else if (line.find("\"final\":false") != std::string::npos) {
      if (line.find("\"role\":\"send\"") != std::string::npos) ++n.periodic_send;
      if (line.find("\"role\":\"recv\"") != std::string::npos) ++n.periodic_recv;
    }
  }
  return n;
}

// Tests a request until it is done (bounded).
bool wait_done(NetApi& api, void* req) {
  const auto end = Clock::now() + std::chrono::seconds(20);
  int done = 0;
  while (Clock::now() < end) {
    if (api.test(req, &done, nullptr) != ncclSuccess) return false;
    if (done != 0) return true;
  }
  return false;
}

// Loads the plugin (ABI v12) and connects one pair of comms on loopback.
struct LoopbackPair {
  std::unique_ptr<NetApi> api;
  void* lcomm = nullptr;
  void* scomm = nullptr;
  void* rcomm = nullptr;
};
void open_pair(LoopbackPair* p) {
  p->api = load_net_api(12, CapturedLog::logger);
  ASSERT_TRUE(p->api);
  ASSERT_EQ(p->api->init(), ncclSuccess);
  char handle[128] = {};
  ASSERT_EQ(p->api->listen(kDev, handle, &p->lcomm), ncclSuccess);
  ASSERT_EQ(
      connect_and_accept(*p->api, kDev, handle, p->lcomm, &p->scomm, &p->rcomm, std::chrono::seconds(20)),
      ncclSuccess);
  ASSERT_NE(p->scomm, nullptr);
  ASSERT_NE(p->rcomm, nullptr);
}

TEST(NetTcpStats, PeriodicLineWhileBusyNoneWhenIdle) {
  const std::string path = "/tmp/railscope-tcp-stats-" + std::to_string(getpid()) + ".jsonl";
  ::unlink(path.c_str());
  setenv("RAILSCOPE_NET_STATS", path.c_str(), 1);
  setenv("RAILSCOPE_NET_STATS_INTERVAL", "1", 1);
  LoopbackPair pair;
  ASSERT_NO_FATAL_FAILURE(open_pair(&pair));
  NetApi* api = pair.api.get();
  void *lcomm = pair.lcomm, *scomm = pair.scomm, *rcomm = pair.rcomm;

  std::vector<char> src(64 * 1024, 'x'), dst(64 * 1024);
  void *smr = nullptr, *rmr = nullptr;
  ASSERT_EQ(api->reg_mr(scomm, src.data(), src.size(), &smr), ncclSuccess);
  ASSERT_EQ(api->reg_mr(rcomm, dst.data(), dst.size(), &rmr), ncclSuccess);
  auto one_message = [&] {
    void *sreq = nullptr, *rreq = nullptr;
    void* data = dst.data();
    size_t size = dst.size();
    int tag = 1;
    while (rreq == nullptr) ASSERT_EQ(api->irecv(rcomm, 1, &data, &size, &tag, &rmr, &rreq), ncclSuccess);
    while (sreq == nullptr) ASSERT_EQ(api->isend(scomm, src.data(), src.size(), 1, smr, &sreq), ncclSuccess);
    ASSERT_TRUE(wait_done(*api, sreq));
    ASSERT_TRUE(wait_done(*api, rreq));
  };

  // Busy for 1.5 s: at least one periodic line per end, written before close.
  const auto busy_end = Clock::now() + std::chrono::milliseconds(1500);
  while (Clock::now() < busy_end) {
    one_message();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  one_message();  // a test() after the interval is over
  const Lines busy = read_lines(path);
  EXPECT_GE(busy.periodic_send, 1);
  EXPECT_GE(busy.periodic_recv, 1);
  EXPECT_EQ(busy.final_lines, 0);

  // Idle for 2.5 s with a receive posted that nothing answers and is tested all along: the post may
  // be worth one line on the receiving end, nothing after that, and nothing on the sending end.
  void* idle_req = nullptr;
  {
    void* data = dst.data();
    size_t size = dst.size();
    int tag = 2;
    while (idle_req == nullptr)
      ASSERT_EQ(api->irecv(rcomm, 1, &data, &size, &tag, &rmr, &idle_req), ncclSuccess);
  }
  const auto idle_end = Clock::now() + std::chrono::milliseconds(2500);
  while (Clock::now() < idle_end) {
    int done = 0;
    ASSERT_EQ(api->test(idle_req, &done, nullptr), ncclSuccess);
    ASSERT_EQ(done, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const Lines idle = read_lines(path);
  EXPECT_EQ(idle.periodic_send, busy.periodic_send);
  EXPECT_LE(idle.periodic_recv, busy.periodic_recv + 1);
  // The receive completes, then close writes both ends' final lines.
  void* sreq = nullptr;
  while (sreq == nullptr) ASSERT_EQ(api->isend(scomm, src.data(), 16, 2, smr, &sreq), ncclSuccess);
  ASSERT_TRUE(wait_done(*api, sreq));
  ASSERT_TRUE(wait_done(*api, idle_req));

  EXPECT_EQ(api->dereg_mr(scomm, smr), ncclSuccess);
  EXPECT_EQ(api->dereg_mr(rcomm, rmr), ncclSuccess);
  EXPECT_EQ(api->close_send(scomm), ncclSuccess);
  EXPECT_EQ(api->close_recv(rcomm), ncclSuccess);
  EXPECT_EQ(api->close_listen(lcomm), ncclSuccess);
  EXPECT_EQ(read_lines(path).final_lines, 2);
  ::unlink(path.c_str());
}

TEST(NetTcpStats, ALinkAtTheStatsNameIsRefusedAndItsTargetLeftAlone) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("railscope-tcp-stats-link-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path victim = dir / "victim", path = dir / "stats.jsonl";
  std::ofstream(victim) << "keep me\n";
  fs::create_symlink(victim, path);
  setenv("RAILSCOPE_NET_STATS", path.c_str(), 1);
  CapturedLog::clear();
  LoopbackPair pair;
  ASSERT_NO_FATAL_FAILURE(open_pair(&pair));
  EXPECT_EQ(pair.api->close_send(pair.scomm), ncclSuccess);  // each close writes a final line
  EXPECT_EQ(pair.api->close_recv(pair.rcomm), ncclSuccess);
  EXPECT_EQ(pair.api->close_listen(pair.lcomm), ncclSuccess);
  unsetenv("RAILSCOPE_NET_STATS");
  std::ifstream in(victim);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "keep me\n");
  EXPECT_TRUE(CapturedLog::contains(path.string() + " is a symbolic link"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace railscope::abi_test
