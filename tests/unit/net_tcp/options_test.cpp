// SPDX-License-Identifier: Apache-2.0
// The TCP engine's thread and socket counts from NCCL's variables: auto, explicit, 0 helper
// threads (the proxy thread moves the bytes, as NCCL's socket transport does), and the 64-socket cap.
#include <gtest/gtest.h>

#include <cstdlib>

#include "plugin/net/tcp/options.h"
#include "plugin/net/tcp/wire.h"

namespace railscope::net::tcp {
namespace {

class TcpOptionsEnv : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    unsetenv("NCCL_SOCKET_NTHREADS");
    unsetenv("NCCL_NSOCKS_PERTHREAD");
  }
  static TcpOptions with(const char* nthreads, const char* nsocks) {
    clear();
    if (nthreads != nullptr) setenv("NCCL_SOCKET_NTHREADS", nthreads, 1);
    if (nsocks != nullptr) setenv("NCCL_NSOCKS_PERTHREAD", nsocks, 1);
    return options_from_env();
  }
};

TEST_F(TcpOptionsEnv, AutoIsFourThreadsOfOneSocket) {
  TcpOptions o = with(nullptr, nullptr);
  EXPECT_EQ(o.nthreads, 4);
  EXPECT_EQ(o.nsocks(), 4);
  o = with("-2", "-2");
  EXPECT_EQ(o.nthreads, 4);
  EXPECT_EQ(o.nsocks(), 4);
}

TEST_F(TcpOptionsEnv, ExplicitCountsMultiply) {
  TcpOptions o = with("2", "3");
  EXPECT_EQ(o.nthreads, 2);
  EXPECT_EQ(o.nsocks(), 6);
}

TEST_F(TcpOptionsEnv, ZeroThreadsMeansTheCallerServesTheSockets) {
  TcpOptions o = with("0", "4");
  EXPECT_EQ(o.nthreads, 0);
  EXPECT_EQ(o.nsocks(), 4);
  o = with("0", nullptr);  // NCCL's own default outside AWS/GCP: no helper thread, one socket
  EXPECT_EQ(o.nthreads, 0);
  EXPECT_EQ(o.nsocks(), 1);
}

TEST_F(TcpOptionsEnv, SocketsAreCappedAtSixtyFour) {
  TcpOptions o = with("16", "64");
  EXPECT_EQ(o.nthreads, 16);
  EXPECT_EQ(o.nsocks(), kMaxSockets);
  o = with("0", "64");
  EXPECT_EQ(o.nsocks(), kMaxSockets);
}

}  // namespace
}  // namespace railscope::net::tcp
