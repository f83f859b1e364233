// SPDX-License-Identifier: Apache-2.0
// The TCP engine's MSG_ZEROCOPY sends through the net plugin's ABI, two processes (CTest runs this
// binary with RAILSCOPE_TCP_ZEROCOPY=on, auto and off, on loopback and across a veth pair between two
// network namespaces). A send may only be reported done once the kernel has released the pages of
// its zero-copy chunks: the sender overwrites its buffer the moment test() says done, while the
// receiver lags behind, and every byte must still arrive as sent. Auto mode must notice that the
// kernel copies on these links (SO_EE_CODE_ZEROCOPY_COPIED), go back to copy sends and say so. With
// a tiny optmem limit in the sender's namespace, zero-copy sends fail with ENOBUFS and are copied.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>

#include "abi/net_tcp/peer.h"

namespace railscope::abi_test {
namespace {

constexpr int kDev = 0;
constexpr size_t kMaxSize = (size_t{16} << 20) + 3;

std::string zerocopy_mode() {
  const char* m = std::getenv("RAILSCOPE_TCP_ZEROCOPY");
  return m != nullptr ? m : "auto";
}

// Odd sizes and sizes around the zero-copy threshold and the chunk size; the inline ones never
// touch the data sockets.
std::vector<size_t> reuse_sizes() {
  return {3,       8193,          16383,         16384,    65537,   100003,  1000003,
          1 << 20, (4 << 20) + 1, (8 << 20) - 7, kMaxSize, 1 << 20, 4000037, 262147};
}

std::unique_ptr<NetApi> ready_api() {
  auto api = load_net_api(12, CapturedLog::logger);
  if (!api || api->init() != ncclSuccess) return nullptr;
  int n = 0;
  if (api->devices(&n) != ncclSuccess || n < 1) return nullptr;
  return api;
}

// Peer: sends every size from one buffer and overwrites the buffer as soon as test() reports done.
// Exit 20: auto mode did not log that it went back to copy sends.
int reuse_sender(int fd, int /*version*/) {
  // A tiny socket option memory limit in the peer's own namespace makes MSG_ZEROCOPY fail with
  // ENOBUFS (the engine must then copy that chunk).
  const char* optmem = std::getenv("RAILSCOPE_TEST_PEER_OPTMEM_MAX");
  if (optmem != nullptr && std::getenv("RAILSCOPE_TEST_PEER_NETNS") != nullptr) {
    std::ofstream out("/proc/sys/net/core/optmem_max");
    out << optmem;
    if (!out.flush()) return 16;
  }
  auto api = ready_api();
  if (!api) return 10;
  void* comm = nullptr;
  if (establish_send(*api, kDev, fd, &comm) != ncclSuccess) return 11;
  std::vector<unsigned char> buf(kMaxSize);
  auto sizes = reuse_sizes();
  for (size_t round = 0; round < 3; ++round)
    for (size_t i = 0; i < sizes.size(); ++i) {
      fill_pattern(buf, sizes[i], round * 100 + i);
      void* req = nullptr;
      if (post_send(*api, comm, buf.data(), sizes[i], 0, nullptr, &req) != ncclSuccess) return 12;
      int sent = -1;
      if (wait_request(*api, req, &sent) != ncclSuccess || sent != static_cast<int>(sizes[i])) return 13;
      std::memset(buf.data(), 0xEE, sizes[i]);  // NCCL reuses the buffer right away
    }
  char ok = 0;
  if (!read_all(fd, &ok, 1)) return 14;
  if (api->close_send(comm) != ncclSuccess) return 15;
  if (zerocopy_mode() == "auto" && !CapturedLog::contains("goes back to copy sends")) return 20;
  return 0;
}

// The "zerocopy" object of the sender's statistics line; empty when it has none.
std::string sender_zerocopy_stats(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("\"role\":\"send\"") == std::string::npos) continue;
    auto at = line.find("\"zerocopy\":{");
    if (at == std::string::npos) return "";
    return line.substr(at, line.find('}', at) - at + 1);
  }
  return "<no send line>";
}

uint64_t field(const std::string& json, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + name + "\":([0-9]+)"))) return UINT64_MAX;
  return std::stoull(m[1]);
}

class ZeroCopy : public ::testing::Test {
 protected:
  void SetUp() override {
    stats_path_ = "/tmp/rs-tcp-zc-stats-" + std::to_string(::getpid()) + ".jsonl";
    std::remove(stats_path_.c_str());
    ::setenv("RAILSCOPE_NET_STATS", stats_path_.c_str(), 1);  // the peer inherits it
  }
  void TearDown() override {
    ::unsetenv("RAILSCOPE_NET_STATS");
    std::remove(stats_path_.c_str());
  }
  // Receives everything reuse_sender sends, pausing `lag` before each receive, and checks every
  // byte; then closes both ends. Returns the peer's exit code (-1 on a failed assertion here).
  int receive_from_reuse_sender(std::chrono::milliseconds lag) {
    auto api = ready_api();
    EXPECT_TRUE(api);
    if (!api) return -1;
    Peer peer = spawn_peer("reuse_sender");
    void *rcomm = nullptr, *lcomm = nullptr;
    EXPECT_EQ(establish_recv(*api, kDev, peer.fd, &rcomm, &lcomm), ncclSuccess);
    std::vector<unsigned char> buf(kMaxSize + 64);
    auto sizes = reuse_sizes();
    for (size_t round = 0; round < 3 && rcomm != nullptr; ++round)
      for (size_t i = 0; i < sizes.size(); ++i) {
        std::this_thread::sleep_for(lag);
        std::fill(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(sizes[i] + 64), 0xA5);
        void* data = buf.data();
        size_t cap = buf.size();
        int tag = 0;
        void* mh = nullptr;
        void* req = nullptr;
        int got = -1;
        if (post_recv(*api, rcomm, 1, &data, &cap, &tag, &mh, &req) != ncclSuccess ||
            wait_request(*api, req, &got) != ncclSuccess) {
          ADD_FAILURE() << "receive of size " << sizes[i] << " failed";
          peer.kill();
          return -1;
        }
        EXPECT_EQ(got, static_cast<int>(sizes[i]));
        size_t bad = check_pattern(buf, sizes[i], round * 100 + i);
        EXPECT_EQ(bad, SIZE_MAX) << "size " << sizes[i] << " round " << round << ": byte " << bad
                                 << " differs (0xEE = the sender's overwrite arrived)";
      }
    char ok = 1;
    write_all(peer.fd, &ok, 1);
    EXPECT_EQ(api->close_recv(rcomm), ncclSuccess);
    EXPECT_EQ(api->close_listen(lcomm), ncclSuccess);
    int rc = peer.wait();
    EXPECT_EQ(api->finalize(), ncclSuccess);
    return rc;
  }
  std::string stats_path_;
};

// The receiver lags behind so the sender's bytes still wait in its socket (untransmitted, or
// unacknowledged) when a premature "done" would let it overwrite them.
TEST_F(ZeroCopy, BufferOverwrittenRightAfterDoneReachesThePeerIntact) {
  EXPECT_EQ(receive_from_reuse_sender(std::chrono::milliseconds(20)), 0)
      << "20: auto mode did not say it went back to copy sends";
  std::string zc = sender_zerocopy_stats(stats_path_);
  std::string mode = zerocopy_mode();
  if (mode == "off") {
    EXPECT_EQ(zc, "") << "RAILSCOPE_TCP_ZEROCOPY=off must not set up zero-copy";
  } else if (std::getenv("RAILSCOPE_TEST_PEER_OPTMEM_MAX") != nullptr) {
    EXPECT_GT(field(zc, "enobufs"), 0u) << "the optmem limit should have refused zero-copy sends: " << zc;
    std::printf("sender: %s\n", zc.c_str());
  } else if (mode == "on") {
    EXPECT_NE(zc.find("\"mode\":\"on\""), std::string::npos) << zc;
    EXPECT_NE(zc.find("\"active\":true"), std::string::npos) << zc;
    EXPECT_GT(field(zc, "sends"), 20u) << "the large chunks went MSG_ZEROCOPY: " << zc;
    EXPECT_GT(field(zc, "bytes"), uint64_t{3} * (16 << 20)) << zc;
  }
}

// Auto mode on loopback and veth: the kernel reports the zero-copy sends as copied, the connection
// goes back to copy sends (active false), the counters show it, and the INFO line said so (checked
// in the peer).
TEST_F(ZeroCopy, AutoGoesBackToCopySendsWhereTheKernelCopies) {
  if (zerocopy_mode() != "auto") GTEST_SKIP() << "checks RAILSCOPE_TCP_ZEROCOPY=auto";
  EXPECT_EQ(receive_from_reuse_sender(std::chrono::milliseconds(0)), 0)
      << "20: no INFO line saying the connection went back to copy sends";
  std::string zc = sender_zerocopy_stats(stats_path_);
  EXPECT_NE(zc.find("\"mode\":\"auto\""), std::string::npos) << zc;
  EXPECT_NE(zc.find("\"active\":false"), std::string::npos)
      << "auto stayed on where the kernel copies: " << zc;
  EXPECT_GE(field(zc, "kernel_copied"), 1u) << zc;
  EXPECT_LE(field(zc, "kernel_copied"), field(zc, "sends")) << zc;
  std::printf("sender: %s\n", zc.c_str());
}

int peer_main(const std::string& role, int fd, int version) {
  if (role == "reuse_sender") return reuse_sender(fd, version);
  return 99;
}

}  // namespace
}  // namespace railscope::abi_test

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--peer")
    return railscope::abi_test::peer_main(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
