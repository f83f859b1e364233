// SPDX-License-Identifier: Apache-2.0
// fabric_findings(): which counter deltas of a window make a finding. The rxe windows are the figures
// the test bed showed (tests/testbed/netfabric/fabric_health.sh); the mlx5 / InfiniBand ones use the
// counter names of the kernel's sysfs ABI (Documentation/ABI/stable/sysfs-class-infiniband) and
// drivers/infiniband/hw/mlx5/counters.c.
#include <gtest/gtest.h>

#include "railscope/node/fabric_findings.h"

namespace railscope::net::verbs {
namespace {

using node::CounterDelta;
using namespace railscope::node;  // fabric_findings.h: FabricWindow, fabric_findings, traffic_of, the
                                  // thresholds

CounterDelta d(const char* name, uint64_t delta) {
  return CounterDelta{name, node::counter_category(name), delta, false};
}

FabricWindow window(node::LinkLayer ll, std::vector<CounterDelta> deltas) {
  return FabricWindow{"rxe1:1", ll, 10.0, std::move(deltas)};
}

std::vector<std::string> ids(const std::vector<diag::Finding>& fs) {
  std::vector<std::string> out;
  for (const auto& f : fs) out.emplace_back(f.id());
  return out;
}

constexpr auto kRoce = node::LinkLayer::Ethernet;
constexpr auto kIb = node::LinkLayer::InfiniBand;

TEST(FabricFindings, HealthyRxeTransferWithOneAckTimeoutIsSilent) {
  // Receiver side: one go-back-N retransmission repeats 65 packets.
  EXPECT_TRUE(
      fabric_findings(window(kRoce, {d("rcvd_pkts", 101647), d("sent_pkts", 1857), d("rdma_recvs", 198),
                                     d("duplicate_request", 65), d("out_of_seq_request", 1)}))
          .empty());
  // Sender side.
  EXPECT_TRUE(fabric_findings(window(kRoce, {d("sent_pkts", 101647), d("rcvd_pkts", 1855),
                                             d("completer_retry_err", 1), d("rcvd_seq_err", 1)}))
                  .empty());
}

TEST(FabricFindings, PacketLossOnRoceNamesPortFiguresAndPfc) {
  auto fs = fabric_findings(window(kRoce, {d("sent_pkts", 1194), d("rcvd_seq_err", 9),
                                           d("completer_retry_err", 8), d("duplicate_request", 3)}));
  ASSERT_EQ(ids(fs), std::vector<std::string>{"fabric.packet_loss"});
  const std::string line = diag::one_line(fs[0]);
  EXPECT_NE(line.find("[fabric.packet_loss] rxe1:1: 17 lost-packet events"), std::string::npos) << line;
  EXPECT_NE(line.find("rcvd_seq_err +9, completer_retry_err +8"), std::string::npos) << line;
  EXPECT_NE(line.find("3 retransmitted (duplicate_request +3)"), std::string::npos) << line;
  EXPECT_NE(line.find("in 10.0 s while the port moved 1194 packets"), std::string::npos) << line;
  EXPECT_NE(line.find("PFC on the RoCE priority"), std::string::npos) << line;
}

// NCCL's default NCCL_IB_TIMEOUT (20): each retransmission timeout stalls the sender ~4.3 s.
const double kDefaultAckTimeout = ack_timeout_seconds(20);

FabricWindow timed(std::vector<CounterDelta> deltas) {
  FabricWindow w = window(kRoce, std::move(deltas));
  w.ack_timeout_s = kDefaultAckTimeout;
  return w;
}

TEST(FabricFindings, AckTimeoutIsNcclsFormula) {
  EXPECT_NEAR(ack_timeout_seconds(20), 4.294967, 1e-6);
  EXPECT_NEAR(ack_timeout_seconds(14), 0.0671089, 1e-7);
  EXPECT_EQ(ack_timeout_seconds(0), 0.0);
  EXPECT_EQ(ack_timeout_seconds(32), 0.0);
}

TEST(FabricFindings, FewTimeoutsThatStallTheWindowAreLoss) {
  // 2 % netem loss, 1 MiB messages, the default timeout: two timer retries (no NAK) in a 10 s window,
  // far below kLossMinEvents, stall the sender ~8.6 s of it.
  auto fs = fabric_findings(timed({d("sent_pkts", 1100), d("rcvd_pkts", 40), d("completer_retry_err", 2)}));
  ASSERT_EQ(ids(fs), std::vector<std::string>{"fabric.packet_loss"});
  const std::string line = diag::one_line(fs[0]);
  EXPECT_NE(line.find("2 retransmission timeouts of 4.29 s stalled the sender for about 8.6 s (86% of the "
                      "window)"),
            std::string::npos)
      << line;
  // mlx5 counts its timer expiries exactly.
  EXPECT_EQ(ids(fabric_findings(timed({d("port_xmit_packets", 5000), d("local_ack_timeout_err", 3)}))),
            std::vector<std::string>{"fabric.packet_loss"});
}

TEST(FabricFindings, TimeoutsThatCostLittleOrAreNaksAreNotLoss) {
  // Healthy twin: the retries a sequence-error NAK started (rcvd_seq_err counts them too) cost no timer.
  EXPECT_TRUE(fabric_findings(timed({d("sent_pkts", 101647), d("rcvd_pkts", 1855),
                                     d("completer_retry_err", 3), d("rcvd_seq_err", 3)}))
                  .empty());
  // One timeout is not a pattern.
  EXPECT_TRUE(fabric_findings(timed({d("sent_pkts", 1100), d("completer_retry_err", 1)})).empty());
  // Two timeouts of a short NCCL_IB_TIMEOUT (14: 67 ms) cost 1 % of the window.
  FabricWindow w = window(kRoce, {d("sent_pkts", 1100), d("completer_retry_err", 2)});
  w.ack_timeout_s = ack_timeout_seconds(14);
  EXPECT_TRUE(fabric_findings(w).empty());
  // Timeout unknown (preflight's link counters): only the count rule.
  EXPECT_TRUE(fabric_findings(window(kRoce, {d("sent_pkts", 1100), d("completer_retry_err", 2)})).empty());
}

TEST(FabricFindings, PacketLossOnInfinibandPointsAtCables) {
  auto fs = fabric_findings(window(kIb, {d("port_xmit_data", 1000), d("packet_seq_err", 40)}));
  ASSERT_EQ(ids(fs), std::vector<std::string>{"fabric.packet_loss"});
  EXPECT_NE(fs[0].effective_fix().find("cable or optic"), std::string::npos);
  EXPECT_NE(fs[0].detail.find("InfiniBand"), std::string::npos);
}

TEST(FabricFindings, LossIsJudgedAgainstTraffic) {
  // 20 events in a billion packets: a loss rate of 2e-8, below the threshold.
  EXPECT_TRUE(
      fabric_findings(window(kIb, {d("port_xmit_packets", 1000000000), d("out_of_sequence", 20)})).empty());
  EXPECT_FALSE(
      fabric_findings(window(kIb, {d("port_xmit_packets", 10000000), d("out_of_sequence", 20)})).empty());
  // Under kLossMinEvents: never, however little traffic.
  EXPECT_TRUE(fabric_findings(window(kRoce, {d("rcvd_seq_err", kLossMinEvents - 1)})).empty());
}

TEST(FabricFindings, ReceiverNotReadyAndDuplicatesAloneAreNotLoss) {
  EXPECT_TRUE(fabric_findings(window(kRoce, {d("rcvd_rnr_err", 5000), d("send_rnr_err", 5000),
                                             d("rnr_nak_retry_err", 50)}))
                  .empty());
  EXPECT_TRUE(fabric_findings(window(kRoce, {d("duplicate_request", 5000)})).empty());
}

TEST(FabricFindings, LinkErrors) {
  EXPECT_TRUE(fabric_findings(window(kIb, {d("symbol_error", kLinkNoiseMin - 1)})).empty());
  auto noise = fabric_findings(window(kIb, {d("symbol_error", kLinkNoiseMin)}));
  ASSERT_EQ(ids(noise), std::vector<std::string>{"fabric.link_errors"});
  EXPECT_NE(noise[0].effective_fix().find("cable"), std::string::npos);
  auto flap = fabric_findings(window(kRoce, {d("link_downed", 1)}));
  ASSERT_EQ(ids(flap), std::vector<std::string>{"fabric.link_errors"});
  EXPECT_NE(flap[0].detail.find("link_downed +1"), std::string::npos);
  EXPECT_NE(flap[0].detail.find("went down or retrained"), std::string::npos);
}

TEST(FabricFindings, CongestionNeedsAShareOfTheTrafficAndIgnoresXmitWait) {
  EXPECT_TRUE(
      fabric_findings(window(kIb, {d("port_xmit_wait", 50000000), d("port_xmit_packets", 1000)})).empty());
  EXPECT_TRUE(
      fabric_findings(window(kRoce, {d("np_cnp_sent", 2000), d("port_xmit_packets", 10000000)})).empty());
  auto fs = fabric_findings(window(kRoce, {d("np_cnp_sent", 3000), d("np_ecn_marked_roce_packets", 3000),
                                           d("port_xmit_packets", 100000)}));
  ASSERT_EQ(ids(fs), std::vector<std::string>{"fabric.congestion"});
  EXPECT_NE(fs[0].detail.find("6000 congestion notifications"), std::string::npos);
}

TEST(FabricFindings, PauseFramesNotDurations) {
  EXPECT_TRUE(fabric_findings(window(kRoce, {d("rx_prio3_pause_duration", 9000000)})).empty());
  EXPECT_TRUE(fabric_findings(window(kRoce, {d("rx_prio3_pause", kPauseMinFrames - 1)})).empty());
  auto fs = fabric_findings(window(
      kRoce, {d("rx_prio3_pause", 800), d("tx_prio3_pause", 800), d("rx_prio3_pause_duration", 5000)}));
  ASSERT_EQ(ids(fs), std::vector<std::string>{"fabric.pause"});
  EXPECT_NE(fs[0].detail.find("1600 PFC pause frames"), std::string::npos);
}

TEST(FabricFindings, Discards) {
  auto fs = fabric_findings(window(kRoce, {d("rx_discards_phy", 100), d("port_rcv_packets", 5000)}));
  ASSERT_EQ(ids(fs), std::vector<std::string>{"fabric.discards"});
  EXPECT_TRUE(fabric_findings(window(kRoce, {d("rx_discards_phy", kDiscardMinEvents - 1)})).empty());
}

TEST(FabricFindings, TrafficCountsWordsBytesAndPackets) {
  Traffic t = traffic_of({d("port_xmit_data", 1000), d("port_rcv_data", 24), d("port_xmit_packets", 7),
                          d("port_rcv_packets", 3), d("unicast_rcv_packets", 3)});
  EXPECT_EQ(t.bytes, 4096u);
  EXPECT_EQ(t.packets, 10u);
  EXPECT_EQ(t.received_packets, 3u);
  Traffic r = traffic_of({d("sent_pkts", 5), d("rcvd_pkts", 9), d("symbol_error", 3)});
  EXPECT_EQ(r.packets, 14u);
  EXPECT_EQ(r.received_packets, 9u);
  EXPECT_EQ(r.bytes, 0u);
}

// The netdev's ethtool counters (PortSampler adds them on RoCE) count all of its traffic: what the port
// moved is its own counters', and the netdev's bytes are not added a second time.
TEST(FabricFindings, TrafficOfTheNetdevIsNotTheTrafficOfThePort) {
  CounterDelta rx = d("rx_bytes", 1'000'000);
  rx.source = node::CounterSource::Ethtool;
  CounterDelta vport = d("rx_vport_rdma_unicast_bytes", 500);
  vport.source = node::CounterSource::Ethtool;
  Traffic t = traffic_of({d("port_rcv_data", 24), rx, vport});
  EXPECT_EQ(t.bytes, 96u);
  // Pause frames from ethtool still count: that is where mlx5 keeps them.
  CounterDelta pause = d("rx_prio3_pause", 800);
  pause.source = node::CounterSource::Ethtool;
  CounterDelta pause_tx = d("tx_prio3_pause", 800);
  pause_tx.source = node::CounterSource::Ethtool;
  EXPECT_EQ(ids(fabric_findings(window(kRoce, {pause, pause_tx}))), std::vector<std::string>{"fabric.pause"});
}

TEST(FabricFindings, EveryIdIsInTheCatalogue) {
  for (const char* id : {"fabric.packet_loss", "fabric.congestion", "fabric.pause", "fabric.link_errors",
                         "fabric.discards", "mtu.changed", "link.down", "link.recovered"})
    EXPECT_NE(diag::find(id), nullptr) << id;
}

}  // namespace
}  // namespace railscope::net::verbs
