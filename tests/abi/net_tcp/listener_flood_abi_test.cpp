// A connection flood at a TCP-engine listener, through the ABI: hundreds of connections
// that never send a hello must not run the process out of file descriptors. The listener holds a
// bounded number of unverified connections, refuses (closes) the newest beyond it, names the flood
// once ([peer.connection_flood]), and serves a real peer once the flood is gone.
#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "abi/net_tcp/net_api.h"

namespace railscope::abi_test {
namespace {

constexpr int kDev = 0;
constexpr int kFlood = 400;  // connections that never send a hello
constexpr int kBound = 256;  // plugin/net/common/refusals.h kMaxUnverifiedPerListener

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
  for (int i = 0; i < kFlood; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0) << i;
    strays.push_back(fd);
  }
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
  EXPECT_EQ(count_lines("[peer.connection_flood]"), 1);

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

}  // namespace
}  // namespace railscope::abi_test
