// SPDX-License-Identifier: Apache-2.0
// send_all / recv_exact / wait_for: the deadline bounds every wait, end of stream is `closed`, and a
// receive takes exactly the bytes asked for.
#include "railscope/socket/deadline_io.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <array>
#include <thread>
#include <vector>

#include "tests/unit/socket/socket_pair.h"

namespace railscope::socket {
namespace {

using namespace std::chrono_literals;
using testing::SocketPair;
using testing::within;

TEST(DeadlineIo, SilentPeerEndsTheReceiveAtTheDeadline) {
  SocketPair p;
  std::array<std::byte, 8> buf{};
  const auto t0 = Clock::now();
  const IoResult r = within(5s, [&] { return recv_exact(p.a.get(), buf, t0 + 200ms); });
  EXPECT_EQ(r.status, Io::timed_out);
  EXPECT_GE(Clock::now() - t0, 190ms);
}

TEST(DeadlineIo, PeerThatDoesNotReadEndsTheSendAtTheDeadline) {
  SocketPair p;
  const std::vector<std::byte> big(64 << 20);  // more than any socket buffer holds
  const auto t0 = Clock::now();
  const IoResult r = within(5s, [&] { return send_all(p.a.get(), big, t0 + 200ms); });
  EXPECT_EQ(r.status, Io::timed_out);
  EXPECT_GE(Clock::now() - t0, 190ms);
}

TEST(DeadlineIo, ReceiveTakesExactlyTheBytesAskedForAcrossShortWrites) {
  // The healthy twin: bytes arriving in pieces are gathered; the rest stays in the socket.
  SocketPair p;
  std::thread writer([&] {
    const char text[] = "abcdefghij";
    for (char c : std::string_view(text, 10)) {
      ASSERT_EQ(::send(p.b.get(), &c, 1, 0), 1);
      std::this_thread::sleep_for(2ms);
    }
  });
  std::array<std::byte, 6> first{};
  std::array<std::byte, 4> second{};
  EXPECT_TRUE(within(5s, [&] { return recv_exact(p.a.get(), first, Clock::now() + 5s); }).ok());
  EXPECT_TRUE(within(5s, [&] { return recv_exact(p.a.get(), second, Clock::now() + 5s); }).ok());
  writer.join();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(first.data()), 6), "abcdef");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(second.data()), 4), "ghij");
}

TEST(DeadlineIo, PeerClosingIsClosedNotATimeout) {
  SocketPair p;
  const char two[2] = {'x', 'y'};
  ASSERT_EQ(::send(p.b.get(), two, 2, 0), 2);
  p.b.reset();
  std::array<std::byte, 4> buf{};
  const IoResult r = within(5s, [&] { return recv_exact(p.a.get(), buf, Clock::now() + 3s); });
  EXPECT_EQ(r.status, Io::closed);
}

TEST(DeadlineIo, SendToAClosedPeerFailsWithoutSigpipe) {
  SocketPair p;
  p.b.reset();
  const std::array<std::byte, 4> buf{};
  const IoResult r = within(5s, [&] { return send_all(p.a.get(), buf, Clock::now() + 3s); });
  EXPECT_EQ(r.status, Io::failed);
  EXPECT_EQ(r.err, EPIPE);
}

TEST(DeadlineIo, NonBlockingCallsSayPendingAndKeepTheirPlace) {
  SocketPair p;
  std::array<std::byte, 4> buf{};
  size_t got = 0;
  EXPECT_EQ(recv_some(p.a.get(), buf, &got).status, Io::pending);
  ASSERT_EQ(::send(p.b.get(), "ab", 2, 0), 2);
  EXPECT_EQ(recv_some(p.a.get(), buf, &got).status, Io::pending);
  EXPECT_EQ(got, 2u);
  ASSERT_EQ(::send(p.b.get(), "cd", 2, 0), 2);
  EXPECT_TRUE(recv_some(p.a.get(), buf, &got).ok());
  EXPECT_EQ(got, 4u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf.data()), 4), "abcd");
}

}  // namespace
}  // namespace railscope::socket
