// SPDX-License-Identifier: Apache-2.0
// FrameReader: a frame is read whole and alone however the bytes arrive, a length over the maximum is
// refused before anything is allocated for it, a refused header is refused, and a peer closing in the
// middle of a frame is `closed`.
#include "railscope/socket/frame_reader.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <thread>

#include "tests/unit/socket/socket_pair.h"

namespace railscope::socket {
namespace {

using namespace std::chrono_literals;
using testing::SocketPair;
using testing::within;

// A test format: 'F', then the body's length as 8 bytes (host order, any value the peer likes).
constexpr size_t kHeader = 9;
constexpr size_t kMaxBody = 64 * 1024;

std::optional<size_t> test_length(std::span<const std::byte> header, std::string* why) {
  if (header[0] != std::byte{'F'}) return *why = "not a test frame", std::nullopt;
  uint64_t length = 0;
  std::memcpy(&length, header.data() + 1, sizeof length);
  return static_cast<size_t>(length);
}

std::string frame(uint64_t length, const std::string& body) {
  std::string f(kHeader, 'F');
  std::memcpy(f.data() + 1, &length, sizeof length);
  return f + body;
}

std::string text(std::span<const std::byte> b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

void send_text(int fd, const std::string& s) {
  ASSERT_EQ(::send(fd, s.data(), s.size(), 0), ssize_t(s.size()));
}

TEST(FrameReader, FramesSplitAnywhereAreReadWholeAndOneAtATime) {
  SocketPair p;
  const std::string one = frame(5, "hello");
  const std::string two = frame(3, "abc");
  const std::string three = frame(0, "");
  const std::string stream = one + two + three;
  // The writer cuts the stream at every third byte: headers split, and a write that ends one frame
  // begins the next.
  std::thread writer([&] {
    for (size_t at = 0; at < stream.size(); at += 3) {
      send_text(p.b.get(), stream.substr(at, 3));
      std::this_thread::sleep_for(1ms);
    }
  });
  FrameReader r(kHeader, kMaxBody, test_length);
  std::vector<std::string> got;
  within(10s, [&] {
    // The non-blocking reader, driven as an event loop drives it.
    while (got.size() < 3) {
      pollfd pfd{p.a.get(), POLLIN, 0};
      ::poll(&pfd, 1, 1000);
      const IoResult res = r.read_available(p.a.get());
      if (res.status == Io::pending) continue;
      ASSERT_TRUE(res.ok()) << static_cast<int>(res.status) << " " << r.why();
      got.push_back(text(r.body()));
    }
  });
  writer.join();
  EXPECT_EQ(got, (std::vector<std::string>{"hello", "abc", ""}));
  // Nothing of a later frame was taken: the socket is empty, and a blocking read of the next frame waits.
  EXPECT_EQ(r.read(p.a.get(), Clock::now() + 50ms).status, Io::timed_out);
}

TEST(FrameReader, BlockingReadLeavesTheNextFrameInTheSocket) {
  SocketPair p;
  send_text(p.b.get(), frame(2, "ok") + frame(4, "next"));
  FrameReader r(kHeader, kMaxBody, test_length);
  ASSERT_TRUE(within(5s, [&] { return r.read(p.a.get(), Clock::now() + 2s); }).ok());
  EXPECT_EQ(text(r.body()), "ok");
  FrameReader other(kHeader, kMaxBody, test_length);
  ASSERT_TRUE(within(5s, [&] { return other.read(p.a.get(), Clock::now() + 2s); }).ok());
  EXPECT_EQ(text(other.body()), "next");
  EXPECT_EQ(text(other.header().first(1)), "F");
}

TEST(FrameReader, LengthOverTheMaximumIsRefusedBeforeAllocating) {
  // A length no allocation can satisfy: refused from the header alone, nothing allocated, no exception.
  SocketPair p;
  send_text(p.b.get(), frame(std::numeric_limits<uint64_t>::max() / 2, ""));
  FrameReader r(kHeader, kMaxBody, test_length);
  IoResult res;
  EXPECT_NO_THROW(res = within(5s, [&] { return r.read(p.a.get(), Clock::now() + 2s); }));
  EXPECT_EQ(res.status, Io::refused);
  EXPECT_NE(r.why().find("over the maximum of 65536"), std::string::npos) << r.why();
  EXPECT_TRUE(r.body().empty());
}

TEST(FrameReader, LengthOneOverTheMaximumIsRefusedEvenWithTheBytesSent) {
  SocketPair p;
  std::thread writer([&] { send_text(p.b.get(), frame(kMaxBody + 1, std::string(kMaxBody + 1, 'x'))); });
  FrameReader r(kHeader, kMaxBody, test_length);
  const IoResult res = within(5s, [&] { return r.read(p.a.get(), Clock::now() + 2s); });
  p.a.reset();  // the refused connection is dropped; the writer's send ends
  writer.join();
  EXPECT_EQ(res.status, Io::refused);
  EXPECT_TRUE(r.body().empty());
}

TEST(FrameReader, LengthAtTheMaximumIsRead) {
  // The twin of the two above: the largest body allowed is read whole.
  SocketPair p;
  std::thread writer([&] { send_text(p.b.get(), frame(kMaxBody, std::string(kMaxBody, 'x'))); });
  FrameReader r(kHeader, kMaxBody, test_length);
  const IoResult res = within(5s, [&] { return r.read(p.a.get(), Clock::now() + 2s); });
  writer.join();
  ASSERT_TRUE(res.ok()) << r.why();
  EXPECT_EQ(r.body().size(), kMaxBody);
}

TEST(FrameReader, RefusedHeaderSaysWhy) {
  SocketPair p;
  send_text(p.b.get(), "GET / HTTP/1.0\r\n\r\n");
  FrameReader r(kHeader, kMaxBody, test_length);
  EXPECT_EQ(within(5s, [&] { return r.read(p.a.get(), Clock::now() + 2s); }).status, Io::refused);
  EXPECT_EQ(r.why(), "not a test frame");
}

TEST(FrameReader, PeerClosingMidFrameIsClosed) {
  for (const size_t cut : {size_t{4}, kHeader, kHeader + 3}) {
    SocketPair p;
    send_text(p.b.get(), frame(8, "12345678").substr(0, cut));
    p.b.reset();
    FrameReader r(kHeader, kMaxBody, test_length);
    EXPECT_EQ(within(5s, [&] { return r.read(p.a.get(), Clock::now() + 3s); }).status, Io::closed)
        << "cut after " << cut << " bytes";
  }
}

TEST(FrameReader, SilentPeerMidFrameEndsAtTheDeadline) {
  SocketPair p;
  send_text(p.b.get(), frame(8, "1234"));
  FrameReader r(kHeader, kMaxBody, test_length);
  const auto t0 = Clock::now();
  EXPECT_EQ(within(5s, [&] { return r.read(p.a.get(), t0 + 200ms); }).status, Io::timed_out);
  EXPECT_GE(Clock::now() - t0, 190ms);
}

}  // namespace
}  // namespace railscope::socket
