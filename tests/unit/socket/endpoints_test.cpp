// SPDX-License-Identifier: Apache-2.0
// listen_on / accept_until / connect_until on loopback: each honours its deadline, a connect retries
// until the listener appears, and a connection made carries bytes both ways.
#include "railscope/socket/endpoints.h"

#include <gtest/gtest.h>

#include <array>
#include <thread>

#include "tests/unit/socket/socket_pair.h"

namespace railscope::socket {
namespace {

using namespace std::chrono_literals;
using testing::within;

TEST(Endpoints, AcceptWithNobodyConnectingEndsAtTheDeadline) {
  std::string error;
  Fd l = listen_on("127.0.0.1", 0, &error);
  ASSERT_TRUE(l) << error;
  const auto t0 = Clock::now();
  Accepted a = within(5s, [&] { return accept_until(l.get(), t0 + 200ms, nullptr); });
  EXPECT_FALSE(a.fd);
  EXPECT_EQ(a.err, 0);
  EXPECT_GE(Clock::now() - t0, 190ms);
}

TEST(Endpoints, ConnectRetriesUntilTheListenerAppears) {
  std::string error;
  uint16_t port = 0;
  {
    Fd probe = listen_on("127.0.0.1", 0, &error);
    ASSERT_TRUE(probe) << error;
    port = local_port(probe.get());
  }
  ASSERT_NE(port, 0);
  Fd listener;
  std::thread late([&] {
    std::this_thread::sleep_for(300ms);
    listener = listen_on("127.0.0.1", port, &error);
  });
  Fd c = within(10s, [&] { return connect_until("127.0.0.1", port, Clock::now() + 5s, 20ms, &error); });
  late.join();
  ASSERT_TRUE(c) << error;
  ASSERT_TRUE(listener);
  std::string peer;
  Accepted a = within(5s, [&] { return accept_until(listener.get(), Clock::now() + 2s, &peer); });
  ASSERT_TRUE(a.fd);
  EXPECT_EQ(peer.rfind("127.0.0.1:", 0), 0u) << peer;
  const std::array<std::byte, 3> out{std::byte{1}, std::byte{2}, std::byte{3}};
  std::array<std::byte, 3> in{};
  EXPECT_TRUE(send_all(c.get(), out, Clock::now() + 2s).ok());
  EXPECT_TRUE(recv_exact(a.fd.get(), in, Clock::now() + 2s).ok());
  EXPECT_EQ(in, out);
}

TEST(Endpoints, ConnectToNobodyGivesUpAtTheDeadlineWithTheReason) {
  std::string error;
  const auto t0 = Clock::now();
  Fd c = within(5s, [&] { return connect_until("127.0.0.1", 1, t0 + 300ms, 20ms, &error); });
  EXPECT_FALSE(c);
  EXPECT_GE(Clock::now() - t0, 250ms);
  EXPECT_NE(error.find("refused"), std::string::npos) << error;
}

TEST(Endpoints, ListenOnAnUnknownHostSaysSo) {
  std::string error;
  EXPECT_FALSE(listen_on("no-such-host.invalid", 0, &error));
  EXPECT_NE(error.find("cannot resolve no-such-host.invalid"), std::string::npos) << error;
}

}  // namespace
}  // namespace railscope::socket
