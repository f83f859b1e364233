// SPDX-License-Identifier: Apache-2.0
// The TCP engine's lane workers (plugin/net/tcp/lanes.h) serving the same lanes from two threads:
// the helper thread and NCCL's proxy thread calling assist() (as isend/test do). Over socketpairs,
// chunks of odd sizes must arrive byte for byte and every chunk must be counted down exactly once,
// whichever thread moved its bytes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "plugin/net/tcp/lanes.h"

namespace railscope::net::tcp {
namespace {

using Clock = std::chrono::steady_clock;

struct Pair {
  std::unique_ptr<Lane> lane = std::make_unique<Lane>();
  Fd peer;
};

Pair make_pair() {
  int sv[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  ::fcntl(sv[0], F_SETFL, ::fcntl(sv[0], F_GETFL) | O_NONBLOCK);
  Pair p;
  p.lane->fd = Fd(sv[0]);
  p.peer = Fd(sv[1]);
  return p;
}

std::byte pattern(size_t lane, size_t i) {
  return static_cast<std::byte>((i * 131 + lane * 7 + i / 4093) & 0xff);
}

// A never-started worker's lanes are served by assist() alone (the mutex is free).
TEST(LaneWorkerAssist, MovesQueuedBytesOnTheCallersThread) {
  Pair p = make_pair();
  ErrorState error;
  LaneWorker w({p.lane.get()}, /*sending=*/true, &error, "peer", 10);
  std::vector<std::byte> src((1 << 20) + 7);
  for (size_t i = 0; i < src.size(); ++i) src[i] = pattern(0, i);
  std::atomic<int> pending{1};
  ASSERT_TRUE(p.lane->ring.push(Task{src.data(), src.size(), 0, &pending}));
  std::vector<std::byte> got;
  std::vector<std::byte> buf(65536);
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while ((pending.load() != 0 || got.size() < src.size()) && Clock::now() < deadline) {
    w.assist();
    ssize_t n = ::recv(p.peer.get(), buf.data(), buf.size(), MSG_DONTWAIT);
    if (n > 0) got.insert(got.end(), buf.begin(), buf.begin() + n);
  }
  EXPECT_EQ(pending.load(), 0);
  ASSERT_EQ(got.size(), src.size());
  EXPECT_TRUE(got == src);
  EXPECT_FALSE(error.failed());
}

// One assist() moves a bounded share (NCCL's proxy thread serves every connection: a call must not
// copy whole socket buffers while the others wait); the next call goes on from there.
TEST(LaneWorkerAssist, OneCallMovesAtMostItsBudget) {
  Pair p = make_pair();
  ErrorState error;
  LaneWorker w({p.lane.get()}, /*sending=*/false, &error, "peer", 10);
  w.set_assist_budget(16 * 1024);
  constexpr size_t kBytes = 96 * 1024;  // fits the socketpair's buffer: all of it is readable at once
  std::vector<std::byte> src(kBytes);
  for (size_t i = 0; i < src.size(); ++i) src[i] = pattern(0, i);
  ASSERT_EQ(::send(p.peer.get(), src.data(), src.size(), MSG_DONTWAIT), static_cast<ssize_t>(kBytes));
  std::vector<std::byte> dst(kBytes);
  std::atomic<int> pending{1};
  ASSERT_TRUE(p.lane->ring.push(Task{dst.data(), dst.size(), 0, &pending}));
  Task* t = p.lane->ring.front();
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(w.assist());
  EXPECT_EQ(t->done, 16u * 1024) << "one call read more than its budget";
  EXPECT_TRUE(w.assist());
  EXPECT_EQ(t->done, 32u * 1024);
  for (int i = 0; i < 10 && pending.load() != 0; ++i) w.assist();
  EXPECT_EQ(pending.load(), 0);
  EXPECT_TRUE(dst == src);
  EXPECT_FALSE(error.failed());
}

// A connection that failed on one lane (or its control stream) moves no more bytes on the others:
// its receives failed, and NCCL may free their buffers once it has closed the comm, so no thread may
// still be reading the bytes a socket holds into them.
TEST(LaneWorkerAssist, AFailedConnectionMovesNoMoreBytes) {
  Pair p = make_pair();
  ErrorState error;
  LaneWorker w({p.lane.get()}, /*sending=*/false, &error, "peer", 10);
  std::vector<std::byte> src(4096, std::byte{0x5a});
  ASSERT_EQ(::send(p.peer.get(), src.data(), src.size(), MSG_DONTWAIT), static_cast<ssize_t>(src.size()));
  std::vector<std::byte> dst(src.size());
  std::atomic<int> pending{1};
  ASSERT_TRUE(p.lane->ring.push(Task{dst.data(), dst.size(), 0, &pending}));
  error.set(Status::fail(ncclRemoteError, "peer.closed", "another lane's peer closed"));
  EXPECT_FALSE(w.assist());
  EXPECT_EQ(p.lane->ring.front()->done, 0u) << "bytes read into a failed connection's receive";
  // Nor does the helper thread, once started and woken.
  ASSERT_TRUE(w.start("rs-test").ok());
  w.wake();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  w.stop();
  EXPECT_EQ(p.lane->ring.front()->done, 0u) << "the helper read into a failed connection's receive";
  EXPECT_EQ(pending.load(), 1);
}

// A started receiving worker with two lanes while the test thread, like NCCL's proxy, queues
// chunks, wakes the helper and calls assist() in a loop: both threads move bytes, none twice.
TEST(LaneWorkerAssist, HelperAndProxyShareTheLanes) {
  constexpr size_t kLanes = 2, kChunks = 300;
  std::vector<Pair> pairs;
  std::vector<Lane*> lanes;
  for (size_t l = 0; l < kLanes; ++l) {
    pairs.push_back(make_pair());
    lanes.push_back(pairs.back().lane.get());
  }
  ErrorState error;
  LaneWorker w(lanes, /*sending=*/false, &error, "peer", 10);
  ASSERT_TRUE(w.start("rs-test-recv").ok());

  std::vector<size_t> sizes(kChunks);
  size_t per_lane[kLanes] = {};
  for (size_t c = 0; c < kChunks; ++c) {
    sizes[c] = 1 + (c * 7919) % 200000;  // 1 B .. ~200 KB, odd sizes
    per_lane[c % kLanes] += sizes[c];
  }
  std::vector<std::vector<std::byte>> dst(kLanes);
  for (size_t l = 0; l < kLanes; ++l) dst[l].assign(per_lane[l], std::byte{0});

  // Each peer end writes its lane's stream in pieces unrelated to the chunk sizes.
  std::vector<std::thread> writers;
  for (size_t l = 0; l < kLanes; ++l)
    writers.emplace_back([&, l] {
      std::vector<std::byte> stream(per_lane[l]);
      for (size_t i = 0; i < stream.size(); ++i) stream[i] = pattern(l, i);
      size_t off = 0;
      while (off < stream.size()) {
        size_t want = std::min<size_t>(stream.size() - off, 1 + (off * 31) % 70000);
        ssize_t n = ::send(pairs[l].peer.get(), stream.data() + off, want, MSG_NOSIGNAL);
        if (n <= 0) return;
        off += static_cast<size_t>(n);
      }
    });

  std::atomic<int> pending{0};
  size_t offset[kLanes] = {};
  size_t queued = 0;
  auto deadline = Clock::now() + std::chrono::seconds(30);
  while ((queued < kChunks || pending.load() != 0) && Clock::now() < deadline) {
    // Keep up to 16 chunks in flight, as NCCL's requests.
    while (queued < kChunks && pending.load() < 16) {
      size_t l = queued % kLanes;
      pending.fetch_add(1);
      ASSERT_TRUE(lanes[l]->ring.push(Task{dst[l].data() + offset[l], sizes[queued], 0, &pending}));
      offset[l] += sizes[queued];
      ++queued;
      w.wake();
    }
    w.assist();
  }
  for (Pair& p : pairs) ::shutdown(p.peer.get(), SHUT_RDWR);  // a writer still blocked: fail, not hang
  for (auto& t : writers) t.join();
  w.stop();
  EXPECT_EQ(queued, kChunks);
  EXPECT_EQ(pending.load(), 0);
  EXPECT_FALSE(error.failed());
  for (size_t l = 0; l < kLanes; ++l) {
    size_t bad = 0;
    for (size_t i = 0; i < dst[l].size(); ++i) bad += dst[l][i] != pattern(l, i);
    EXPECT_EQ(bad, 0u) << "lane " << l;
  }
}

}  // namespace
}  // namespace railscope::net::tcp
