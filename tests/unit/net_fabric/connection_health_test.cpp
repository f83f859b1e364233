// SPDX-License-Identifier: Apache-2.0
// A connection's health (ConnectionHealth): its first error is its only one, a failed completion is
// remembered only while it has none, a port failure recorded after the connection opened makes it
// unhealthy (one lane or several) while one recorded before does not, and the ports it attaches to
// learn of it and forget it. Plain lanes over real PortHealth objects, no libibverbs.
#include <gtest/gtest.h>

#include <infiniband/verbs.h>

#include <vector>

#include "plugin/net/verbs/connection_health.h"
#include "plugin/net/verbs/qp_set.h"
#include "plugin/net/verbs/setup/link_params.h"

namespace railscope::net::verbs {
namespace {

std::vector<Lane> lanes_on(std::vector<PortHealth>& ports) {
  std::vector<Lane> lanes(ports.size());
  for (size_t i = 0; i < ports.size(); ++i) lanes[i].health = &ports[i];
  return lanes;
}

TEST(ConnectionHealth, TheFirstErrorStays) {
  ConnectionHealth h;
  EXPECT_TRUE(h.ok());
  EXPECT_TRUE(h.healthy());
  EXPECT_TRUE(h.record(Status::fail(ncclRemoteError, "progress.stalled", "first")));
  EXPECT_FALSE(h.record(Status::fail(ncclSystemError, "wc.error", "second")));
  EXPECT_FALSE(h.ok());
  EXPECT_FALSE(h.healthy());
  EXPECT_EQ(h.error().code, ncclRemoteError);
  EXPECT_EQ(h.error().finding().id(), "progress.stalled");
  EXPECT_EQ(h.error().finding().detail, "first");
}

TEST(ConnectionHealth, OnlyTheCompletionBehindTheFirstErrorIsRemembered) {
  ConnectionHealth h;
  ibv_wc ok{};
  ok.status = IBV_WC_SUCCESS;
  ok.qp_num = 7;
  h.note_failed_completion(0, ok);
  EXPECT_EQ(h.failed_completion().status, 0) << "a successful completion is no failure";
  ibv_wc bad{};
  bad.status = IBV_WC_RETRY_EXC_ERR;
  bad.vendor_err = 0x81;
  bad.qp_num = 42;
  h.note_failed_completion(1, bad);
  ASSERT_TRUE(h.record(Status::fail(ncclRemoteError, "wc.retry_exceeded", "test")));
  ibv_wc later{};
  later.status = IBV_WC_WR_FLUSH_ERR;
  later.qp_num = 43;
  h.note_failed_completion(0, later);  // the flushes after the failure
  EXPECT_EQ(h.failed_completion().status, static_cast<int>(IBV_WC_RETRY_EXC_ERR));
  EXPECT_EQ(h.failed_completion().vendor_err, 0x81u);
  EXPECT_EQ(h.failed_completion().qpn, 42u);
  EXPECT_EQ(h.failed_completion().lane, 1u);
}

TEST(ConnectionHealth, APortFailureAfterOpeningFailsTheConnection) {
  for (size_t nlanes : {1u, 2u}) {  // one lane (the inline check's own pointer) and several
    std::vector<PortHealth> ports(nlanes);
    ports[0].fail(diag::make("async.port_error", "before the connection"));  // not this connection's
    std::vector<Lane> lanes = lanes_on(ports);
    ConnectionHealth h;
    h.watch_ports(lanes);
    EXPECT_TRUE(h.healthy()) << nlanes << " lane(s)";
    EXPECT_EQ(h.failed_port(), nullptr);
    ports[nlanes - 1].fail(diag::make("async.port_error", "during the connection"));
    EXPECT_FALSE(h.healthy()) << nlanes << " lane(s)";
    EXPECT_TRUE(h.ok()) << "a port failure is the connection's error once it is recorded";
    ASSERT_EQ(h.failed_port(), &ports[nlanes - 1]);
    EXPECT_EQ(h.failed_port()->last().detail, "during the connection");
    EXPECT_TRUE(h.port_failed(nlanes - 1));
  }
}

TEST(ConnectionHealth, AttachedPortsLearnOfTheConnectionAndForgetIt) {
  std::vector<PortHealth> ports(2);
  std::vector<Lane> lanes = lanes_on(ports);
  lanes[0].path_mtu = 1024;  // lane 1 has no QP
  ConnectionHealth h;
  LinkParams link;
  link.timeout = 20;
  link.retry_cnt = 7;
  h.attach(lanes, link);
  EXPECT_EQ(h.stall_budget(), retry_budget(20, 7));
  EXPECT_TRUE(lanes[0].attached);
  EXPECT_FALSE(lanes[1].attached);
  EXPECT_EQ(ports[0].users(), 1);
  EXPECT_EQ(ports[1].users(), 0);
  ConnectionHealth::detach(lanes);
  EXPECT_FALSE(lanes[0].attached);
  EXPECT_EQ(ports[0].users(), 0);
  ConnectionHealth::detach(lanes);  // twice: nothing more
  EXPECT_EQ(ports[0].users(), 0);
}

TEST(ConnectionHealth, AStallNamesTheSendAndTheBudget) {
  std::vector<PortHealth> ports(1);
  std::vector<Lane> lanes = lanes_on(ports);
  lanes[0].path_mtu = 1024;
  ConnectionHealth h;
  LinkParams link;
  link.timeout = 14;
  link.retry_cnt = 7;
  h.attach(lanes, link);
  const Status st = h.stalled(4096, std::chrono::seconds(3), std::chrono::seconds(3), "here -> there");
  EXPECT_EQ(st.code, ncclRemoteError);
  EXPECT_EQ(st.finding().id(), "progress.stalled");
  EXPECT_NE(st.finding().detail.find("a 4096-byte send posted 3.0 s ago has not completed (budget"),
            std::string::npos)
      << st.finding().detail;
  EXPECT_NE(st.finding().detail.find("2^14 x 8 tries"), std::string::npos) << st.finding().detail;
  EXPECT_NE(st.finding().detail.find("on here -> there"), std::string::npos) << st.finding().detail;
  // Queued behind sends that completed later than it was posted: how long the connection did nothing.
  const Status queued = h.stalled(4096, std::chrono::seconds(7), std::chrono::seconds(3), "here -> there");
  EXPECT_NE(queued.finding().detail.find(
                "posted 7.0 s ago has not completed, and no send of the connection completed for 3.0 s"),
            std::string::npos)
      << queued.finding().detail;
  ConnectionHealth::detach(lanes);
}

TEST(ConnectionHealth, LivenessIsCheckedAtMostEveryHundredMilliseconds) {
  ConnectionHealth h;
  const auto t0 = ConnectionHealth::Clock::now();
  EXPECT_TRUE(h.liveness_due(t0));
  EXPECT_FALSE(h.liveness_due(t0 + std::chrono::milliseconds(99)));
  EXPECT_TRUE(h.liveness_due(t0 + std::chrono::milliseconds(100)));
}

TEST(ConnectionHealth, TheClockIsReadOnceInSixteenIdleCalls) {
  ConnectionHealth h;
  int due = 0;
  for (int i = 0; i < 64; ++i) due += h.clock_due() ? 1 : 0;
  EXPECT_EQ(due, 4);
}

}  // namespace
}  // namespace railscope::net::verbs
