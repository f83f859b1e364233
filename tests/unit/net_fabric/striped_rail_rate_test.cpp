// SPDX-License-Identifier: Apache-2.0
// A connection striped over several ports (a merged NIC: QPs on two devices) accounts each part of a
// large send to the port it went through, with that part's own completion time
// (ConnectionTelemetry::record_parts): a slow port of the connection shows its own rate, not the
// message's. Lanes and QPs as plain records (no libibverbs object: the accounting reads only which lane
// each QP is on), each lane's PortHealth real.
#include <gtest/gtest.h>

#include <chrono>

#include "plugin/net/verbs/connection_telemetry.h"
#include "plugin/net/verbs/qp_set.h"
#include "plugin/net/verbs/setup/handshake.h"  // kMaxDevsPerEnd
#include "plugin/net/verbs/watch/port_health.h"
#include "railscope/node/rail_skew.h"

namespace railscope::net::verbs {
namespace {

using Clock = ConnectionTelemetry::Clock;
using std::chrono::milliseconds;

// `nqps` QPs, QP q on lane q % 2; both lanes attached to their port's health.
class StripedConnection {
 public:
  explicit StripedConnection(size_t nqps) : lanes(2), qps(nqps) {
    for (size_t l = 0; l < 2; ++l) {
      lanes[l].health = &health[l];
      lanes[l].attached = true;
    }
    for (size_t q = 0; q < nqps; ++q) qps[q].lane = static_cast<int>(q % 2);
  }
  void record_parts(size_t bytes, Clock::time_point posted_at, const Clock::time_point* lane_done) const {
    ConnectionTelemetry::record_parts(lanes, qps, bytes, posted_at, lane_done);
  }
  void record_transfer(size_t bytes, Clock::time_point start, Clock::time_point end) const {
    ConnectionTelemetry::record_transfer(lanes, bytes, start, end);
  }
  PortHealth health[2];
  std::vector<Lane> lanes;
  std::vector<QpLane> qps;
};

node::RailRate rate_of(const PortHealth& h) {
  const auto t = h.rail_rate().totals();
  return {"", t.bytes, t.busy_ns, t.transfers};
}

TEST(StripedRailRate, EachPortGetsItsPartsBytesOverItsPartsTime) {
  StripedConnection c(4);
  const Clock::time_point t0 = Clock::now();
  // Lane 0's parts (QPs 0 and 2) done after 10 ms, lane 1's (QPs 1 and 3) after 50 ms: port 1 is
  // five times slower. Two such sends, 100 ms apart.
  for (int i = 0; i < 2; ++i) {
    const Clock::time_point posted = t0 + milliseconds(100 * i);
    const Clock::time_point done[kMaxDevsPerEnd] = {posted + milliseconds(10), posted + milliseconds(50)};
    c.record_parts(1 << 20, posted, done);
  }
  const node::RailRate r0 = rate_of(c.health[0]), r1 = rate_of(c.health[1]);
  EXPECT_EQ(r0.bytes, 1u << 20);  // half of each send
  EXPECT_EQ(r1.bytes, 1u << 20);
  EXPECT_EQ(r0.transfers, 2u);
  EXPECT_EQ(r0.busy_ns, 20'000'000u);
  EXPECT_EQ(r1.busy_ns, 100'000'000u);
  EXPECT_NEAR(r0.bytes_per_second() / r1.bytes_per_second(), 5.0, 1e-9);
}

TEST(StripedRailRate, UnevenPartsAndQpCountsFollowChunkOf) {
  StripedConnection c(3);  // QPs 0, 2 on lane 0, QP 1 on lane 1
  const Clock::time_point t0 = Clock::now();
  const Clock::time_point done[kMaxDevsPerEnd] = {t0 + milliseconds(20), t0 + milliseconds(20)};
  const size_t size = 300 * 1024;  // 102400 per QP (128-aligned): 204800 on lane 0, 102400 on lane 1
  c.record_parts(size, t0, done);
  EXPECT_EQ(rate_of(c.health[0]).bytes, 204800u);
  EXPECT_EQ(rate_of(c.health[1]).bytes, 102400u);
  EXPECT_EQ(rate_of(c.health[0]).transfers, 1u);
  EXPECT_EQ(rate_of(c.health[1]).transfers, 1u);
}

TEST(StripedRailRate, SmallSendsAndDetachedLanesAddNothing) {
  StripedConnection c(2);
  const Clock::time_point t0 = Clock::now();
  const Clock::time_point done[kMaxDevsPerEnd] = {t0 + milliseconds(1), t0 + milliseconds(1)};
  c.record_parts(node::kRailRateMinMessageBytes - 1, t0, done);  // below the size a rate means something
  EXPECT_EQ(rate_of(c.health[0]).transfers, 0u);
  EXPECT_EQ(rate_of(c.health[1]).transfers, 0u);
  c.lanes[1].attached = false;  // its QPs never connected
  c.record_parts(1 << 20, t0, done);
  EXPECT_EQ(rate_of(c.health[0]).transfers, 1u);
  EXPECT_EQ(rate_of(c.health[1]).transfers, 0u);
}

// Where the parts are not timed per lane, each attached lane gets its share of the bytes over the
// whole send's time.
TEST(StripedRailRate, AnUntimedSendGivesEachLaneItsShare) {
  StripedConnection c(2);
  const Clock::time_point t0 = Clock::now();
  c.record_transfer(1 << 20, t0, t0 + milliseconds(8));
  EXPECT_EQ(rate_of(c.health[0]).bytes, 1u << 19);
  EXPECT_EQ(rate_of(c.health[1]).bytes, 1u << 19);
  EXPECT_EQ(rate_of(c.health[1]).busy_ns, 8'000'000u);
  c.record_transfer(1 << 20, t0, t0);  // no time: nothing to rate
  c.lanes[0].attached = false;
  c.record_transfer(1 << 20, t0 + milliseconds(10), t0 + milliseconds(12));
  EXPECT_EQ(rate_of(c.health[0]).transfers, 1u);
  EXPECT_EQ(rate_of(c.health[1]).transfers, 2u);
  EXPECT_EQ(rate_of(c.health[1]).bytes, 1u << 20);
}

}  // namespace
}  // namespace railscope::net::verbs
