// SPDX-License-Identifier: Apache-2.0
// A connection flood at a TCP-engine listener, through the ABI: hundreds of connections that never
// send a hello must neither run the process out of file descriptors nor shut the real peer out. The
// listener holds at most 128 unverified connections from one address (256 in all), closes the oldest
// to make room, names the flood once per source and interval ([peer.connection_flood], WARN), and the
// real peer connects and transfers while the flood goes on. The healthy twin logs no refusal at all.
#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "abi/net_tcp/net_api.h"

namespace railscope::abi_test {
namespace {

constexpr int kDev = 0;
constexpr int kFlood = 400;  // connections that never send a hello
constexpr int kBound = 128;  // plugin/net/common/unverified_connections.h kMaxUnverifiedPerSource

int open_fds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  while (readdir(d) != nullptr) ++n;
  closedir(d);
  return n;
}

int count_lines(const std::string& needle) {
  int n = 0;
  for (const auto& line : CapturedLog::lines())
    if (line.text.find(needle) != std::string::npos) ++n;
  return n;
}

// The TCP engine's handle: family (u16) at 6, port (u16, host order) at 8, address at 12.
sockaddr_in listener_address(const char* handle) {
  uint16_t family = 0, port = 0;
  std::memcpy(&family, handle + 6, 2);
  std::memcpy(&port, handle + 8, 2);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  std::memcpy(&a.sin_addr, handle + 12, 4);
  EXPECT_EQ(family, 4);
  return a;
}

// Opens n connections to addr that never send anything; appends them to fds.
void flood(const sockaddr_in& addr, int n, std::vector<int>* fds) {
  for (int i = 0; i < n; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0) << i;
    fds->push_back(fd);
  }
}

TEST(NetTcpListener, ConnectionFloodIsBoundedAndNamedOnce) {
  auto api = load_net_api(12, CapturedLog::logger);
  ASSERT_TRUE(api);
  ASSERT_EQ(api->init(), ncclSuccess);
  char handle[128] = {};
  void* lcomm = nullptr;
  ASSERT_EQ(api->listen(kDev, handle, &lcomm), ncclSuccess);
  const sockaddr_in addr = listener_address(handle);
  CapturedLog::clear();

  std::vector<int> strays;
  flood(addr, kFlood, &strays);
  const int before = open_fds();
  for (int i = 0; i < 20; ++i) {
    void* rcomm = nullptr;
    ASSERT_EQ(api->accept(lcomm, &rcomm), ncclSuccess);
    ASSERT_EQ(rcomm, nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const int held = open_fds() - before;
  EXPECT_LE(held, kBound) << "the listener holds " << held << " of " << kFlood << " flood connections";
  EXPECT_GT(held, 0);
  EXPECT_EQ(count_lines("[peer.connection_flood]"), 1);  // one line per source and interval (10 s)

  // The flood ends; the listener drops what it held and serves a real peer.
  for (int fd : strays) close(fd);
  for (int i = 0; i < 20; ++i) {
    void* rcomm = nullptr;
    ASSERT_EQ(api->accept(lcomm, &rcomm), ncclSuccess);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  void* scomm = nullptr;
  void* rcomm = nullptr;
  ASSERT_EQ(connect_and_accept(*api, kDev, handle, lcomm, &scomm, &rcomm, std::chrono::seconds(30)),
            ncclSuccess);
  ASSERT_NE(scomm, nullptr);
  ASSERT_NE(rcomm, nullptr);
  EXPECT_EQ(api->close_send(scomm), ncclSuccess);
  EXPECT_EQ(api->close_recv(rcomm), ncclSuccess);
  EXPECT_EQ(api->close_listen(lcomm), ncclSuccess);
  EXPECT_LE(open_fds(), before - kFlood + 2) << "descriptors left behind";
}

// One message of n bytes from scomm to rcomm, checked.
void transfer(NetApi& api, void* scomm, void* rcomm, size_t n) {
  std::vector<char> out(n), in(n, 0);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<char>(i * 7 + 1);
  void *smr = nullptr, *rmr = nullptr, *sreq = nullptr, *rreq = nullptr;
  ASSERT_EQ(api.reg_mr(scomm, out.data(), n, &smr), ncclSuccess);
  ASSERT_EQ(api.reg_mr(rcomm, in.data(), n, &rmr), ncclSuccess);
  void* data = in.data();
  size_t size = n;
  int tag = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (rreq == nullptr && std::chrono::steady_clock::now() < deadline)
    ASSERT_EQ(api.irecv(rcomm, 1, &data, &size, &tag, &rmr, &rreq), ncclSuccess);
  while (sreq == nullptr && std::chrono::steady_clock::now() < deadline)
    ASSERT_EQ(api.isend(scomm, out.data(), n, 0, smr, &sreq), ncclSuccess);
  ASSERT_NE(rreq, nullptr);
  ASSERT_NE(sreq, nullptr);
  int sdone = 0, rdone = 0, got = 0;
  while ((sdone == 0 || rdone == 0) && std::chrono::steady_clock::now() < deadline) {
    if (sdone == 0) {
      ASSERT_EQ(api.test(sreq, &sdone, nullptr), ncclSuccess);
    }
    if (rdone == 0) {
      ASSERT_EQ(api.test(rreq, &rdone, &got), ncclSuccess);
    }
  }
  ASSERT_TRUE(sdone != 0 && rdone != 0) << "the transfer did not complete";
  EXPECT_EQ(static_cast<size_t>(got), n);
  EXPECT_EQ(in, out);
  EXPECT_EQ(api.dereg_mr(scomm, smr), ncclSuccess);
  EXPECT_EQ(api.dereg_mr(rcomm, rmr), ncclSuccess);
}

// Listens, optionally floods the listener with kSilent connections from loopback (held open, and more
// opened while the real peer connects), then connects the real peer from loopback too and moves one
// message. Returns how long connect_and_accept took.
std::chrono::milliseconds real_peer_during(bool with_flood) {
  constexpr int kSilent = 300;
  auto api = load_net_api(12, CapturedLog::logger);
  EXPECT_TRUE(api);
  if (!api) return {};
  EXPECT_EQ(api->init(), ncclSuccess);
  char handle[128] = {};
  void* lcomm = nullptr;
  EXPECT_EQ(api->listen(kDev, handle, &lcomm), ncclSuccess);
  const sockaddr_in addr = listener_address(handle);
  CapturedLog::clear();
  std::vector<int> strays;
  if (with_flood) {
    flood(addr, kSilent, &strays);
    for (int i = 0; i < 20; ++i) {  // the listener takes them (32 per call) and holds what it may
      void* rcomm = nullptr;
      EXPECT_EQ(api->accept(lcomm, &rcomm), ncclSuccess);
      EXPECT_EQ(rcomm, nullptr);
    }
  }
  std::vector<int> more;
  std::thread flooder([&] {
    if (with_flood) flood(addr, kSilent, &more);  // the flood goes on while the peer connects
  });
  void* scomm = nullptr;
  void* rcomm = nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(connect_and_accept(*api, kDev, handle, lcomm, &scomm, &rcomm, std::chrono::seconds(8)),
            ncclSuccess);
  const auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  flooder.join();
  EXPECT_NE(scomm, nullptr) << "the real peer was shut out";
  EXPECT_NE(rcomm, nullptr) << "the real peer was shut out";
  if (scomm != nullptr && rcomm != nullptr) {
    transfer(*api, scomm, rcomm, 1 << 20);
    EXPECT_EQ(api->close_send(scomm), ncclSuccess);
    EXPECT_EQ(api->close_recv(rcomm), ncclSuccess);
  }
  EXPECT_EQ(api->close_listen(lcomm), ncclSuccess);
  for (int fd : strays) close(fd);
  for (int fd : more) close(fd);
  return took;
}

TEST(NetTcpListener, TheRealPeerConnectsDuringAFlood) {
  const auto took = real_peer_during(true);
  std::fprintf(stderr, "the real peer connected in %lld ms during a flood of 2 x 300 connections\n",
               static_cast<long long>(took.count()));
  EXPECT_LT(took, std::chrono::seconds(5)) << "well before the 10 s deadline frees any room";
  EXPECT_GE(count_lines("[peer.connection_flood]"), 1);
  int warns = 0;
  for (const auto& line : CapturedLog::lines()) warns += line.level == NCCL_LOG_WARN ? 1 : 0;
  EXPECT_LE(warns, 2) << "one line per source and interval, plus the count at close";
}

TEST(NetTcpListener, TheRealPeerAloneLogsNoRefusal) {
  const auto took = real_peer_during(false);
  std::fprintf(stderr, "the real peer connected in %lld ms without a flood\n",
               static_cast<long long>(took.count()));
  for (const auto& line : CapturedLog::lines()) {
    EXPECT_NE(line.level, NCCL_LOG_WARN) << line.text;
    EXPECT_EQ(line.text.find("stray"), std::string::npos) << line.text;
    EXPECT_EQ(line.text.find("flood"), std::string::npos) << line.text;
  }
}

}  // namespace
}  // namespace railscope::abi_test
