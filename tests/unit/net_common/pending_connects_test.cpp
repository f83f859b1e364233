// SPDX-License-Identifier: Apache-2.0
// PendingConnects: the connect() bookkeeping of both engines, with a fake connector whose step() is
// scripted: ids written into the handle, completion and failure forget the entry, abandoned entries
// expire after the given time, and the number in progress is bounded.
#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "plugin/net/common/pending_connects.h"

namespace railscope::net {
namespace {

struct FakeComm : SendComm {};

struct FakeConnector {
  int steps_left = 1;  // step() calls before the comm is ready
  bool fail = false;
  static inline int alive = 0;
  FakeConnector() { ++alive; }
  ~FakeConnector() { --alive; }
  FakeConnector(const FakeConnector&) = delete;
  FakeConnector& operator=(const FakeConnector&) = delete;
  Status step(FakeComm** out) {
    *out = nullptr;
    if (fail) return Status::fail(ncclRemoteError, "peer.closed", "scripted failure");
    if (--steps_left <= 0) *out = new FakeComm();
    return Status::success();
  }
};

using Handle = std::array<std::byte, 128>;

void store(HandleBytes h, uint64_t id) { std::memcpy(h.data(), &id, sizeof id); }
uint64_t stored(const Handle& h) {
  uint64_t id = 0;
  std::memcpy(&id, h.data(), sizeof id);
  return id;
}
Status bad(const std::string& why) { return Status::fail(ncclInvalidArgument, "peer.bad_handshake", why); }
const ConnectIdCodec kCodec{&store, &bad};

using Clock = PendingConnects<FakeConnector>::Clock;
constexpr auto kExpire = std::chrono::seconds(120);

// One connect() call as an engine makes it: a new connector with steps_to_ready steps when the
// handle carries no id yet.
Status call(PendingConnects<FakeConnector>& p, Handle& h, SendComm** out, Clock::time_point now,
            int steps_to_ready = 3, uint64_t new_id = 42) {
  auto make = [&](std::unique_ptr<FakeConnector>* c, uint64_t* id) {
    *c = std::make_unique<FakeConnector>();
    (*c)->steps_left = steps_to_ready;
    *id = new_id;
    return Status::success();
  };
  return p.step<FakeComm>(kCodec, stored(h), HandleBytes(h), make, out, kExpire, now);
}

TEST(NetPendingConnects, IdIsStoredUntilTheCommIsReady) {
  PendingConnects<FakeConnector> p;
  Handle h{};
  SendComm* comm = nullptr;
  const auto t0 = Clock::now();
  ASSERT_TRUE(call(p, h, &comm, t0).ok());
  EXPECT_EQ(comm, nullptr);
  EXPECT_EQ(stored(h), 42u);
  ASSERT_TRUE(call(p, h, &comm, t0).ok());
  EXPECT_EQ(comm, nullptr);
  ASSERT_TRUE(call(p, h, &comm, t0).ok());
  ASSERT_NE(comm, nullptr);
  delete comm;
  EXPECT_EQ(stored(h), 0u);
  EXPECT_EQ(p.size(), 0u);
}

TEST(NetPendingConnects, UnknownIdIsABadHandle) {
  PendingConnects<FakeConnector> p;
  Handle h{};
  store(HandleBytes(h), 7);
  SendComm* comm = nullptr;
  Status st = call(p, h, &comm, Clock::now());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.finding().id(), "peer.bad_handshake");
}

// NCCL started a connect and never called again: the entry (and its sockets) must not live until the
// engine is torn down.
TEST(NetPendingConnects, AbandonedConnectsExpire) {
  PendingConnects<FakeConnector> p;
  const int before = FakeConnector::alive;
  const auto t0 = Clock::now();
  Handle abandoned{};
  SendComm* comm = nullptr;
  ASSERT_TRUE(call(p, abandoned, &comm, t0, 3, 1).ok());
  Handle kept{};
  ASSERT_TRUE(call(p, kept, &comm, t0, 100, 2).ok());
  EXPECT_EQ(p.size(), 2u);
  // The kept one is touched within the bound, the abandoned one is not.
  ASSERT_TRUE(call(p, kept, &comm, t0 + kExpire / 2).ok());
  ASSERT_TRUE(call(p, kept, &comm, t0 + kExpire + std::chrono::seconds(1)).ok());
  EXPECT_EQ(p.size(), 1u);
  EXPECT_EQ(FakeConnector::alive, before + 1);
  Status st = call(p, abandoned, &comm, t0 + kExpire + std::chrono::seconds(2));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.finding().detail.find("expired"), std::string::npos) << st.finding().detail;
  p.clear();
  EXPECT_EQ(FakeConnector::alive, before);
}

TEST(NetPendingConnects, FailureForgetsTheEntry) {
  PendingConnects<FakeConnector> p;
  Handle h{};
  SendComm* comm = nullptr;
  auto make = [&](std::unique_ptr<FakeConnector>* c, uint64_t* id) {
    *c = std::make_unique<FakeConnector>();
    (*c)->fail = true;
    *id = 9;
    return Status::success();
  };
  Status st = p.step<FakeComm>(kCodec, 0, HandleBytes(h), make, &comm, kExpire);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.finding().id(), "peer.closed");
  EXPECT_EQ(p.size(), 0u);
  EXPECT_EQ(stored(h), 0u);
}

TEST(NetPendingConnects, NumberInProgressIsBounded) {
  PendingConnects<FakeConnector> p;
  const auto t0 = Clock::now();
  SendComm* comm = nullptr;
  for (size_t i = 0; i < kMaxPendingConnects; ++i) {
    Handle h{};
    ASSERT_TRUE(call(p, h, &comm, t0, 100, i + 1).ok()) << i;
  }
  Handle h{};
  Status st = call(p, h, &comm, t0, 100, kMaxPendingConnects + 1);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.finding().id(), "net.too_many_connects");
  EXPECT_EQ(stored(h), 0u);
  // Expiry makes room again.
  ASSERT_TRUE(call(p, h, &comm, t0 + kExpire + std::chrono::seconds(1), 100, 1).ok());
  EXPECT_EQ(p.size(), 1u);
}

}  // namespace
}  // namespace railscope::net
