// SPDX-License-Identifier: Apache-2.0
// Traffic class / service level of a connection (plugin/net/verbs/setup/qos_agreement.h): what the
// receiver's QPs use (NCCL's rule: the sender's, NCCL_IB_FIFO_TC for the receiver's QPs on RoCE), what
// its REPLY says, and the qos.tc_mismatch finding at both ends.
#include <gtest/gtest.h>

#include "plugin/net/verbs/setup/qos_agreement.h"

namespace railscope::net::verbs {
namespace {

EndInfo end(const char* host, int tc, int sl) {
  EndInfo e;
  e.host = host;
  e.traffic_class = static_cast<uint8_t>(tc);
  e.service_level = static_cast<uint8_t>(sl);
  return e;
}

LinkParams own(int tc, int sl, int fifo_tc = -1, bool known = true) {
  LinkParams p;
  p.traffic_class = tc;
  p.service_level = sl;
  p.fifo_traffic_class = fifo_tc;
  p.qos_known = known;
  return p;
}

TEST(NetQosAgreement, SameSettingTakesTheSendersAndSaysNothing) {
  const QosAgreement a = agree_qos_at_receiver(own(106, 3), "nodeB", end("nodeA", 106, 3), true);
  EXPECT_EQ(a.traffic_class, 106);
  EXPECT_EQ(a.service_level, 3);
  EXPECT_FALSE(a.mismatch.has_value());
  EndInfo reply = end("nodeB", 0, 0);
  reply_qos(own(106, 3), end("nodeA", 106, 3), &reply);
  EXPECT_FALSE(check_qos_at_sender(end("nodeA", 106, 3), reply, true).has_value());
}

TEST(NetQosAgreement, DifferentClassIsNamedWithBothValuesAndTheFix) {
  const QosAgreement a = agree_qos_at_receiver(own(0, 0), "nodeB", end("nodeA", 106, 0), true);
  EXPECT_EQ(a.traffic_class, 106);  // the connection still carries the sender's class, as NCCL's
  ASSERT_TRUE(a.mismatch.has_value());
  EXPECT_EQ(a.mismatch->id(), "qos.tc_mismatch");
  const std::string line = diag::one_line(*a.mismatch);
  EXPECT_NE(line.find("nodeA uses traffic class 106 (DSCP 26)"), std::string::npos) << line;
  EXPECT_NE(line.find("nodeB is set to traffic class 0 (DSCP 0)"), std::string::npos) << line;
  EXPECT_NE(line.find("NCCL_IB_TC"), std::string::npos) << line;
  // The REPLY carries the receiver's own setting, so the sender names the same disagreement.
  EndInfo reply = end("nodeB", 106, 0);
  reply_qos(own(0, 0), end("nodeA", 106, 0), &reply);
  EXPECT_EQ(reply.traffic_class, 0);
  auto at_sender = check_qos_at_sender(end("nodeA", 106, 0), reply, true);
  ASSERT_TRUE(at_sender.has_value());
  EXPECT_EQ(diag::one_line(*at_sender), line);
}

TEST(NetQosAgreement, ServiceLevelCountsOnInfiniBandTheClassDoesNot) {
  EXPECT_FALSE(agree_qos_at_receiver(own(0, 2), "b", end("a", 106, 2), false).mismatch.has_value());
  auto m = agree_qos_at_receiver(own(0, 2), "b", end("a", 0, 5), false).mismatch;
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->detail.find("service level 5"), std::string::npos) << m->detail;
  EXPECT_EQ(m->detail.find("traffic class"), std::string::npos) << m->detail;
  EXPECT_TRUE(agree_qos_at_receiver(own(0, 2), "b", end("a", 0, 5), true).mismatch.has_value());
}

TEST(NetQosAgreement, FifoClassIsTheReceiversOnRoceOnlyAndNoDisagreement) {
  QosAgreement a = agree_qos_at_receiver(own(106, 0, 98), "b", end("a", 106, 0), true);
  EXPECT_EQ(a.traffic_class, 98);
  EXPECT_EQ(a.service_level, 0);
  EXPECT_FALSE(a.mismatch.has_value());
  a = agree_qos_at_receiver(own(106, 0, 98), "b", end("a", 106, 0), false);  // InfiniBand: no GRH class
  EXPECT_EQ(a.traffic_class, 106);
}

TEST(NetQosAgreement, AnEndThatDoesNotKnowItsClassAdoptsWithoutJudging) {
  const QosAgreement a = agree_qos_at_receiver(own(0, 0, -1, false), "b", end("a", 106, 3), true);
  EXPECT_EQ(a.traffic_class, 106);
  EXPECT_EQ(a.service_level, 3);
  EXPECT_FALSE(a.mismatch.has_value());
  EndInfo reply = end("b", 0, 0);
  reply_qos(own(0, 0, -1, false), end("a", 106, 3), &reply);
  EXPECT_EQ(reply.traffic_class, 106);
  EXPECT_EQ(reply.service_level, 3);
  EXPECT_FALSE(check_qos_at_sender(end("a", 106, 3), reply, true).has_value());
}

TEST(NetQosAgreement, LinkParamsReadFifoClassAndWhetherTheClassIsKnown) {
  unsetenv("NCCL_IB_TC");
  unsetenv("NCCL_IB_SL");
  unsetenv("NCCL_IB_FIFO_TC");
  EXPECT_EQ(link_params_from_env(-1).fifo_traffic_class, -1);
  EXPECT_TRUE(link_params_from_env(-1).qos_known);
  EXPECT_FALSE(link_params_unknown_comm().qos_known);
  setenv("NCCL_IB_TC", "106", 1);
  EXPECT_FALSE(link_params_unknown_comm().qos_known);  // the service level is still open
  setenv("NCCL_IB_SL", "0", 1);
  setenv("NCCL_IB_FIFO_TC", "98", 1);
  const LinkParams p = link_params_unknown_comm();
  EXPECT_TRUE(p.qos_known);
  EXPECT_EQ(p.traffic_class, 106);
  EXPECT_EQ(p.fifo_traffic_class, 98);
  for (const char* v : {"NCCL_IB_TC", "NCCL_IB_SL", "NCCL_IB_FIFO_TC"}) unsetenv(v);
}

}  // namespace
}  // namespace railscope::net::verbs
