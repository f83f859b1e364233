// SPDX-License-Identifier: Apache-2.0
// Counter deltas attached to a link (tools/preflight/link_counters.h): the deltas of two snapshots,
// their checked wire form, and what a slow link's finding says about them. The rxe figures are the test
// bed's (tests/testbed/netfabric/fabric_health.sh, as in tests/unit/net_fabric/fabric_findings_test.cpp).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "link_counters.h"
#include "link_stats.h"

namespace railscope::preflight {
namespace {

using node::CounterCategory;

node::PortCounters snap(std::vector<std::pair<std::string, uint64_t>> values) {
  node::PortCounters p;
  p.device = "rxe3";
  p.port = 1;
  for (auto& [name, v] : values)
    p.counters.push_back({name, node::counter_category(name), v, true, node::CounterSource::Hw});
  node::sort_counters(&p.counters);
  return p;
}

EndCounters rxe(std::vector<std::pair<std::string, uint64_t>> before,
                std::vector<std::pair<std::string, uint64_t>> after) {
  return end_counters(snap(std::move(before)), snap(std::move(after)), true, false, 3.2);
}

TEST(LinkCounters, OnlyWhatMovedJudgedCategoriesFirst) {
  const EndCounters c =
      rxe({{"sent_pkts", 100}, {"rcvd_seq_err", 2}, {"rdma_sends", 5}, {"ack_deferred", 7}},
          {{"sent_pkts", 9100}, {"rcvd_seq_err", 414}, {"rdma_sends", 5}, {"ack_deferred", 9}});
  EXPECT_EQ(c.port, "rxe3:1");
  ASSERT_EQ(c.deltas.size(), 3u);  // rdma_sends did not move
  EXPECT_EQ(c.deltas[0].name, "rcvd_seq_err");
  EXPECT_EQ(c.deltas[0].delta, 412u);
  EXPECT_EQ(c.deltas[1].category, CounterCategory::Traffic);
  EXPECT_EQ(category_totals(c), nlohmann::json({{"loss", 412}, {"traffic", 9000}, {"other", 2}}));
}

TEST(LinkCounters, AtMostKMaxDeltasTravel) {
  std::vector<std::pair<std::string, uint64_t>> a, b;
  for (int i = 0; i < 200; ++i)
    a.emplace_back(fmt::format("x{}", i), 0), b.emplace_back(fmt::format("x{}", i), 1);
  a.emplace_back("rcvd_seq_err", 0), b.emplace_back("rcvd_seq_err", 50);
  const EndCounters c = rxe(a, b);
  ASSERT_EQ(c.deltas.size(), kMaxDeltas);
  EXPECT_EQ(c.deltas[0].name, "rcvd_seq_err");  // the loss is kept, other counters dropped
}

TEST(LinkCounters, WireRoundTripAndHostileInput) {
  const EndCounters c =
      rxe({{"rcvd_seq_err", 0}, {"sent_pkts", 0}}, {{"rcvd_seq_err", 412}, {"sent_pkts", 9}});
  std::string error;
  const auto back = end_counters_from_json(nlohmann::json::parse(to_json(c).dump()), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(to_json(*back), to_json(c));
  EXPECT_EQ(back->deltas[0].category, CounterCategory::Loss);
  // The peer's category is never read: it comes from the name.
  auto j = to_json(c);
  j["deltas"][0]["category"] = "traffic";
  EXPECT_EQ(end_counters_from_json(j, &error)->deltas[0].category, CounterCategory::Loss);
  const auto refused = [&](nlohmann::json bad, const char* why) {
    error.clear();
    EXPECT_FALSE(end_counters_from_json(bad, &error)) << bad.dump();
    EXPECT_NE(error.find(why), std::string::npos) << error;
  };
  refused(nlohmann::json::array(), "not an object");
  auto k = to_json(c);
  k["deltas"][0]["name"] = "a\nb";
  refused(k, "odd characters");
  k = to_json(c);
  k["deltas"][0]["delta"] = -3;
  refused(k, "bad field");
  k = to_json(c);
  k["deltas"][0]["source"] = "proc";
  refused(k, "unknown counter source");
  k = to_json(c);
  k["seconds"] = 1e300;
  refused(k, "seconds out of range");
  k = to_json(c);
  k["deltas"] = nlohmann::json::array();
  for (size_t i = 0; i <= kMaxDeltas; ++i) k["deltas"].push_back(to_json(c)["deltas"][0]);
  refused(k, "too many deltas");
  k = to_json(c);
  k.erase("readable");
  refused(k, "missing or bad field");
}

TEST(LinkCounters, NoteSaysLossOnTheEndThatSawIt) {
  const EndCounters sender = rxe({{"sent_pkts", 0}, {"rcvd_seq_err", 0}, {"completer_retry_err", 0}},
                                 {{"sent_pkts", 9000}, {"rcvd_seq_err", 400}, {"completer_retry_err", 12}});
  const EndCounters receiver = rxe({{"rcvd_pkts", 0}}, {{"rcvd_pkts", 8800}});
  const std::string note = counters_note("hostB/rxe3:1", sender, "hostA/rxe2:1", receiver);
  EXPECT_EQ(note.find("counters: hostB/rxe3:1 (sender): 412 lost-packet events (rcvd_seq_err +400, "
                      "completer_retry_err +12) in 3.2 s while the port moved 9000 packets"),
            0u)
      << note;
  EXPECT_NE(note.find("[fabric.packet_loss]"), std::string::npos) << note;
  EXPECT_EQ(note.find("hostA"), std::string::npos) << note;  // the receiver was clean
}

TEST(LinkCounters, NoteSaysCleanWhenNothingReachesTheThresholds) {
  // A healthy rxe transfer with one ACK timeout on each side: under the net plugin's thresholds.
  const EndCounters sender =
      rxe({{"sent_pkts", 0}, {"rcvd_seq_err", 0}}, {{"sent_pkts", 9000}, {"rcvd_seq_err", 1}});
  const EndCounters receiver =
      rxe({{"rcvd_pkts", 0}, {"out_of_seq_request", 0}}, {{"rcvd_pkts", 8800}, {"out_of_seq_request", 1}});
  EXPECT_EQ(
      counters_note("hostB/rxe3:1", sender, "hostA/rxe2:1", receiver),
      "counters clean on both ends in 3.2 s (no loss, congestion, pause, link error or discard above the "
      "net plugin's thresholds; 2 event(s) below them): a rate limit or congestion outside the NIC");
  EndCounters none;
  none.port = "rxe2:1";
  EXPECT_EQ(counters_note("hostB/rxe3:1", std::nullopt, "hostA/rxe2:1", none),
            "no counters readable on either end");
  const std::string one = counters_note("hostB/rxe3:1", rxe({{"sent_pkts", 0}}, {{"sent_pkts", 5}}),
                                        "hostA/rxe2:1", std::nullopt);
  EXPECT_EQ(
      one,
      "counters clean on the other end in 3.2 s (no loss, congestion, pause, link error or discard above "
      "the net plugin's thresholds): a rate limit or congestion outside the NIC (hostA/rxe2:1 (receiver): "
      "no counters readable)");
}

TEST(LinkCounters, SlowLinkFindingCarriesTheNoteHealthyLinksNone) {
  std::vector<LinkMeasurement> links;
  for (int i = 0; i < 4; ++i) {
    LinkMeasurement m;
    m.rail = 1;
    m.src_node = fmt::format("node{}", i);
    m.dst_node = fmt::format("node{}", (i + 1) % 4);
    m.src_nic = m.dst_nic = "rxe3:1";
    m.GBps = i == 2 ? 10 : 46;
    m.line_GBps = 50;
    m.src_counters = rxe({{"sent_pkts", 0}, {"rcvd_seq_err", 0}},
                         {{"sent_pkts", 9000}, {"rcvd_seq_err", i == 2 ? 412 : 1}});
    m.dst_counters = rxe({{"rcvd_pkts", 0}}, {{"rcvd_pkts", 9000}});
    links.push_back(m);
  }
  const LinkVerdict v = judge_links(links, {});
  ASSERT_EQ(v.findings.size(), 1u);
  EXPECT_EQ(v.findings[0].id(), "link.slow");
  EXPECT_NE(v.findings[0].detail.find("median of rail 1 is 46.0 GB/s; counters: node2/rxe3:1 (sender): 412 "
                                      "lost-packet events (rcvd_seq_err +412)"),
            std::string::npos)
      << v.findings[0].detail;
  // No counters attached (an older rank, or --no-counters): the finding is as before.
  links[2].src_counters.reset();
  links[2].dst_counters.reset();
  EXPECT_EQ(judge_links(links, {}).findings[0].detail.find("counters"), std::string::npos);
}

}  // namespace
}  // namespace railscope::preflight
