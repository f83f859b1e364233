// SPDX-License-Identifier: Apache-2.0
#include "oob.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "protocol.h"

namespace railscope::netbench {
namespace {

using namespace std::chrono_literals;

TEST(NetbenchOob, FramedMessagesRoundTrip) {
  OobListener l = OobListener::bind("127.0.0.1", 0);
  ASSERT_GT(l.port(), 0);
  std::thread t([&] {
    OobSocket c = oob_connect("127.0.0.1", l.port(), 5s);
    RunParams p;
    p.seed = 42;
    c.send_struct(kMsgHello, p);
    const auto echo = c.receive(kMsgHandle, 5s);
    EXPECT_EQ(echo.size(), 128u);
  });
  OobSocket s = l.accept(5s);
  const auto p = s.receive_struct<RunParams>(kMsgHello, 5s);
  EXPECT_EQ(p.seed, 42u);
  std::vector<unsigned char> handle(128, 7);
  s.send(kMsgHandle, handle);
  t.join();
}

TEST(NetbenchOob, PeerGoneIsAnErrorNotAHang) {
  OobListener l = OobListener::bind("127.0.0.1", 0);
  std::thread t([&] { OobSocket c = oob_connect("127.0.0.1", l.port(), 5s); });
  OobSocket s = l.accept(5s);
  t.join();
  EXPECT_THROW(
      {
        try {
          s.receive(kMsgHello, 5s);
        } catch (const BenchError& e) {
          EXPECT_NE(std::string(e.what()).find("closed"), std::string::npos) << e.what();
          throw;
        }
      },
      BenchError);
}

TEST(NetbenchOob, SilenceHitsTheDeadline) {
  OobListener l = OobListener::bind("127.0.0.1", 0);
  OobSocket c = oob_connect("127.0.0.1", l.port(), 5s);
  OobSocket s = l.accept(5s);
  const auto t0 = Clock::now();
  EXPECT_THROW(s.receive(kMsgHello, 200ms), BenchError);
  EXPECT_LT(Clock::now() - t0, 2s);
}

TEST(NetbenchOob, GarbageAndWrongTypesAreRejected) {
  OobListener l = OobListener::bind("127.0.0.1", 0);
  OobSocket c = oob_connect("127.0.0.1", l.port(), 5s);
  OobSocket s = l.accept(5s);
  const char junk[] = "GET / HTTP/1.0\r\n\r\n";
  ASSERT_GT(::send(c.fd(), junk, sizeof junk, 0), 0);
  EXPECT_THROW(s.receive(kMsgHello, 1s), BenchError);

  OobSocket c2 = oob_connect("127.0.0.1", l.port(), 5s);
  OobSocket s2 = l.accept(5s);
  c2.send(kMsgDone, {});
  EXPECT_THROW(s2.receive(kMsgHello, 1s), BenchError);
  // A struct of the wrong size is refused too.
  c2.send(kMsgHello, std::vector<unsigned char>(3, 0));
  EXPECT_THROW(s2.receive_struct<RunParams>(kMsgHello, 1s), BenchError);
}

TEST(NetbenchOob, ConnectRetriesUntilTheServerListensThenGivesUp) {
  const auto t0 = Clock::now();
  EXPECT_THROW(oob_connect("127.0.0.1", 1, 300ms), BenchError);  // port 1: nobody listens
  EXPECT_GE(Clock::now() - t0, 250ms);
}

}  // namespace
}  // namespace railscope::netbench
