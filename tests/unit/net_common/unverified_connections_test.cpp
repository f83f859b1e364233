// SPDX-License-Identifier: Apache-2.0
// The listener policy both engines share (plugin/net/common/unverified_connections.h, refusals.h):
// eviction of the oldest, the per-source bound, the deadline, the last read before an eviction, bounded
// accepts per call, and the refusal log's one line per source and interval. Each fault has a healthy
// twin that refuses and logs nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "plugin/net/common/unverified_connections.h"
#include "railscope/core/log.h"

namespace railscope::net {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct Line {
  log::Level level;
  std::string text;
};
std::vector<Line>& lines() {
  static std::vector<Line> l;
  return l;
}
void capture(log::Level level, std::string_view text) { lines().push_back({level, std::string(text)}); }

struct Captured {
  Captured() {
    lines().clear();
    log::set_extra_sink(&capture);
  }
  ~Captured() { log::set_extra_sink(nullptr); }
};

// A connection as the tests see it: an id, and whether its hello has arrived.
struct Fake {
  int id = 0;
  bool hello = false;
};

struct Harness {
  Captured captured;
  RefusalLog log{"test-listener"};
  UnverifiedConnections<Fake> set;
  std::vector<int> verified;
  Clock::time_point t0 = Clock::now();

  explicit Harness(AdmissionLimits limits = {4, 2, 10s, 32}) : set(&log, limits) {}
  static Verdict advance(Fake& f) { return f.hello ? Verdict::verified() : Verdict::waiting(); }
  void admit(const std::string& source, int id, bool hello = false, Clock::duration at = 0s) {
    set.admit(
        source, source + ":1", Fake{id, hello}, advance,
        [&](Fake&& f, const Status&) { verified.push_back(f.id); }, t0 + at);
  }
  void advance_all(Clock::duration at) {
    set.advance_all(
        advance, [&](Fake&& f, const Status&) { verified.push_back(f.id); }, t0 + at);
  }
};

int count(std::string_view needle, log::Level level) {
  int n = 0;
  for (const auto& l : lines())
    if (l.level == level && l.text.find(needle) != std::string::npos) ++n;
  return n;
}

TEST(UnverifiedConnections, TheOldestIsEvictedWhenFull) {
  Harness h;
  h.admit("10.0.0.1", 1);
  h.admit("10.0.0.2", 2);
  h.admit("10.0.0.3", 3);
  h.admit("10.0.0.4", 4);
  h.admit("10.0.0.5", 5);  // full: 1 (the oldest) goes
  EXPECT_EQ(h.set.size(), 4u);
  EXPECT_EQ(h.set.from("10.0.0.1"), 0u);
  EXPECT_EQ(h.set.from("10.0.0.5"), 1u);
  EXPECT_EQ(count("closed an unverified connection to make room (flood) from 10.0.0.1", log::Level::Warn), 1);
  EXPECT_EQ(count("[peer.connection_flood]", log::Level::Warn), 1);
}

TEST(UnverifiedConnections, BelowTheBoundNothingIsEvictedOrLogged) {
  Harness h;
  for (int i = 1; i <= 4; ++i) h.admit("10.0.0." + std::to_string(i), i);
  EXPECT_EQ(h.set.size(), 4u);
  EXPECT_TRUE(lines().empty());
}

TEST(UnverifiedConnections, ASourceAtItsBoundLosesItsOwnOldest) {
  Harness h;
  h.admit("10.0.0.9", 1);  // another source's, older than the flood
  h.admit("10.0.0.66", 2);
  h.admit("10.0.0.66", 3);
  h.admit("10.0.0.66", 4);  // the source's bound is 2: 2 goes, not 1
  EXPECT_EQ(h.set.from("10.0.0.9"), 1u);
  EXPECT_EQ(h.set.from("10.0.0.66"), 2u);
  EXPECT_EQ(count("from 10.0.0.66", log::Level::Warn), 1);
  EXPECT_EQ(count("10.0.0.9", log::Level::Warn), 0);
}

TEST(UnverifiedConnections, TwoSourcesWithinTheirBoundsKeepEverything) {
  Harness h;
  h.admit("10.0.0.9", 1);
  h.admit("10.0.0.9", 2);
  h.admit("10.0.0.66", 3);
  h.admit("10.0.0.66", 4);
  EXPECT_EQ(h.set.size(), 4u);
  EXPECT_TRUE(lines().empty());
}

TEST(UnverifiedConnections, ASilentConnectionIsClosedAtTheDeadline) {
  Harness h;
  h.admit("10.0.0.1", 1);
  h.advance_all(9s);
  EXPECT_EQ(h.set.size(), 1u);
  h.advance_all(10s);
  EXPECT_EQ(h.set.size(), 0u);
  EXPECT_EQ(count("dropped a stray connection (silent) from 10.0.0.1", log::Level::Info), 1);
  EXPECT_EQ(count("", log::Level::Warn), 0) << "a single probe is no warning";
}

TEST(UnverifiedConnections, AHelloBeforeTheDeadlineIsVerifiedAndLogsNothing) {
  Harness h;
  h.admit("10.0.0.1", 1);
  h.advance_all(1s);
  EXPECT_EQ(h.set.size(), 1u);
  h.advance_all(9s);
  EXPECT_TRUE(h.verified.empty());
  // the hello arrives late, still within the deadline
  h.set.advance_all([](Fake&) { return Verdict::verified(); },
                    [&](Fake&& f, const Status&) { h.verified.push_back(f.id); }, h.t0 + 9s);
  EXPECT_EQ(h.verified, std::vector<int>{1});
  EXPECT_TRUE(lines().empty());
}

TEST(UnverifiedConnections, TheVictimIsReadOnceMoreBeforeItIsEvicted) {
  Harness h;
  h.admit("10.0.0.66", 1, /*hello=*/true);  // its hello arrived after the last pass
  h.admit("10.0.0.66", 2);
  h.admit("10.0.0.66", 3);  // 1 is the victim: verified, not evicted
  EXPECT_EQ(h.verified, std::vector<int>{1});
  EXPECT_EQ(h.set.from("10.0.0.66"), 2u);
  EXPECT_TRUE(lines().empty());
}

TEST(UnverifiedConnections, AVictimWithoutHelloIsEvicted) {
  Harness h;
  h.admit("10.0.0.66", 1);
  h.admit("10.0.0.66", 2);
  h.admit("10.0.0.66", 3);
  EXPECT_TRUE(h.verified.empty());
  EXPECT_EQ(count("[peer.connection_flood]", log::Level::Warn), 1);
}

TEST(RefusalLog, AFloodIsOneLinePerSourceAndInterval) {
  Captured c;
  const auto t0 = Clock::now();
  {
    RefusalLog log("L");
    const Status why = connection_flood("10.0.0.66:1", "L", 256, 128, 5ms);
    for (int i = 0; i < 300; ++i) log.note("10.0.0.66", refusal::kEvicted, why, t0 + i * 10ms);  // 3 s
    log.note("10.0.0.7", refusal::kMalformed, why, t0 + 1s);
    EXPECT_EQ(lines().size(), 2u);
    log.flush(t0 + 5s);  // within the interval: nothing
    EXPECT_EQ(lines().size(), 2u);
    log.flush(t0 + 10s);
    ASSERT_EQ(lines().size(), 3u);
    EXPECT_EQ(lines()[2].level, log::Level::Warn);
    EXPECT_NE(
        lines()[2].text.find("closed 299 more unverified connections to make room (flood) from 10.0.0.66"),
        std::string::npos)
        << lines()[2].text;
  }
  EXPECT_EQ(lines().size(), 3u) << "nothing left to log at close";
}

TEST(RefusalLog, NothingRefusedLogsNothing) {
  Captured c;
  {
    RefusalLog log("L");
    log.flush(Clock::now() + 1h);
  }
  EXPECT_TRUE(lines().empty());
}

TEST(RefusalLog, ManySourcesStayBounded) {
  Captured c;
  const auto t0 = Clock::now();
  RefusalLog log("L");
  const Status why = Status::fail(ncclRemoteError, "peer.bad_handshake", "x");
  for (int i = 0; i < 1000; ++i)
    log.note(fmt::format("10.0.{}.{}", i / 256, i % 256), refusal::kSilent, why, t0);
  EXPECT_LE(lines().size(), RefusalLog::kMaxSources + 1);
}

// Bounded accepts: a backlog of 100 connections takes several accept() calls, 32 each.
TEST(UnverifiedConnections, AcceptsAtMost32PerCall) {
  Captured c;
  RefusalLog log("L");
  UnverifiedConnections<Fd> set(&log);
  SocketAddress a;
  a.addr = {127, 0, 0, 1};
  Fd listener;
  ASSERT_TRUE(open_listener(a, &listener, &a.port).ok());
  std::vector<Fd> clients(100);
  for (auto& fd : clients) ASSERT_TRUE(start_connect(a, &fd).ok());
  std::this_thread::sleep_for(200ms);
  auto make = [](Fd fd, const std::string&) { return fd; };
  auto advance = [](Fd&) { return Verdict::waiting(); };
  auto on_verified = [](Fd&&, const Status&) {};
  ASSERT_TRUE(set.accept_from(listener, make, advance, on_verified).ok());
  EXPECT_EQ(set.size(), kMaxAcceptsPerCall);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(set.accept_from(listener, make, advance, on_verified).ok());
  EXPECT_EQ(set.size(), 100u);
  EXPECT_TRUE(lines().empty());
}

}  // namespace
}  // namespace railscope::net
