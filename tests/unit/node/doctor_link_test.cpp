// SPDX-License-Identifier: Apache-2.0
// `railscope doctor`'s link section and the --watch evaluation on fixture nodes (fabric_fixtures.h).
#include <gtest/gtest.h>

#include <set>

#include "doctor.h"
#include "fabric_fixtures.h"
#include "railscope/node/ethtool_stats.h"
#include "railscope/node/port_sampler.h"
#include "railscope/node/sysfs.h"
#include "watch.h"

using namespace railscope;
using namespace railscope::doctor;
using railscope::testing_fixtures::FabricTree;

namespace {

std::multiset<std::string> ids(const std::vector<diag::Finding>& v) {
  std::multiset<std::string> out;
  for (const auto& f : v) out.emplace(f.id());
  return out;
}

TEST(DoctorLink, HealthyNdrNodeHasNoLinkFinding) {
  FabricTree t("doctor-ndr8");
  testing_fixtures::healthy_ndr8(t);
  const NodeFacts f = gather({t.root(), false, ""});
  const Report r = run(f);
  const Section& s = section_named(r, "link");
  EXPECT_TRUE(s.findings.empty()) << diag::one_line(s.findings.front());
  const auto j = to_json(r, f);
  const auto& ports = j["sections"]["link"]["ports"];
  ASSERT_EQ(ports.size(), 8u);
  EXPECT_EQ(ports[0]["speed_mbps"], 400000);
  EXPECT_EQ(ports[0]["width"], 4);
  EXPECT_EQ(ports[0]["lane"], "NDR");
  EXPECT_EQ(ports[0]["siblings"], 7);
  EXPECT_EQ(ports[0]["verdict"], "ok");
  EXPECT_TRUE(ports[0]["capable_mbps"].is_null()) << "InfiniBand: no capability in sysfs";
  const std::string text = to_text(r, f);
  EXPECT_NE(
      text.find(
          "mlx5_0:1 InfiniBand ACTIVE: 400 Gb/s (4X NDR), 7 of 7 sibling(s) active, fastest 400 Gb/s → ok"),
      std::string::npos)
      << text;
}

TEST(DoctorLink, DegradedPortWarns) {
  FabricTree t("doctor-2x");
  testing_fixtures::healthy_ndr8(t);
  t.ib_port("mlx5_3", "200 Gb/sec (2X NDR)");
  t.counter("mlx5_3", "link_downed", 3);
  const NodeFacts f = gather({t.root(), false, ""});
  const Report r = run(f);
  EXPECT_EQ(ids(section_named(r, "link").findings),
            (std::multiset<std::string>{"link.degraded", "link.downed_since_boot"}));
  EXPECT_EQ(r.exit_code, 1);
  const auto j = to_json(r, f);
  EXPECT_EQ(j["sections"]["link"]["ports"][3]["verdict"], "degraded");
  EXPECT_EQ(j["sections"]["link"]["ports"][3]["link_errors_since_boot"]["link_downed"], 3);
}

class Watch : public testing::Test {
 protected:
  Watch() : t_("watch") {
    t_.roce_port("mlx5_0", "ens1f0np0", "400 Gb/sec (4X NDR)");
    t_.roce_port("mlx5_1", "ens2f0np0", "400 Gb/sec (4X NDR)");
    t_.counter("mlx5_0", "vendor_only_counter", 1, /*hw=*/true);  // a name no table knows
  }
  // Two snapshots of both ports with `change` run between them.
  template <typename F>
  WatchResult watch(F&& change) {
    const node::Sysfs sysfs(t_.root());
    auto eth = node::ethtool_source_for(sysfs);
    node::PortSampler a(sysfs, "mlx5_0", 1, "ens1f0np0", eth.get());
    node::PortSampler b(sysfs, "mlx5_1", 1, "ens2f0np0", eth.get());
    std::vector<WatchPort> snaps(2);
    snaps[0].before = a.sample();
    snaps[1].before = b.sample();
    change();
    snaps[0].after = a.sample();
    snaps[1].after = b.sample();
    return evaluate_watch(snaps, 3.0);
  }
  FabricTree t_;
};

TEST_F(Watch, HealthyTwinShowsNoFinding) {
  const WatchResult r = watch([&] {
    t_.counter("mlx5_0", "port_xmit_data", 5000000);
    t_.counter("mlx5_1", "port_rcv_data", 5000000);
  });
  EXPECT_TRUE(r.findings.empty()) << diag::one_line(r.findings.front());
  EXPECT_EQ(r.exit_code, 0);
  const auto j = watch_json(r, t_.root());
  EXPECT_EQ(j["ports"][0]["totals"]["traffic"], 5000000);
  EXPECT_EQ(j["ports"][0]["totals"]["loss"], 0);
  EXPECT_EQ(j["status"], "ok");
}

TEST_F(Watch, LossPauseAndUnknownCountersOnTheRightPort) {
  const WatchResult r = watch([&] {
    t_.counter("mlx5_1", "out_of_sequence", 380, true);
    t_.counter("mlx5_1", "packet_seq_err", 32, true);
    t_.counter("mlx5_0", "vendor_only_counter", 11, true);
    t_.ethtool_stats("ens2f0np0", {{"rx_prio3_pause", 1500}, {"tx_pause_storm_warning_events", 1}});
  });
  // Judged as the net plugin judges a window (node::fabric_findings).
  EXPECT_EQ(ids(r.findings),
            (std::multiset<std::string>{"fabric.packet_loss", "fabric.pause", "counters.pause_storm"}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.findings[0].detail.find("mlx5_1:1: 412 lost-packet events (out_of_sequence +380, "
                                      "packet_seq_err +32) in 3.0 s"),
            std::string::npos)
      << r.findings[0].detail;
  const auto j = watch_json(r, t_.root());
  EXPECT_EQ(j["ports"][0]["totals"]["loss"], 0);
  EXPECT_EQ(j["ports"][1]["totals"]["loss"], 412);
  EXPECT_EQ(j["ports"][1]["totals"]["pause"], 1501);
  EXPECT_EQ(j["ports"][1]["netdev"], "ens2f0np0");
  EXPECT_EQ(j["ports"][0]["totals"]["other"], 10) << "unknown counters are shown";
  bool unknown = false;
  for (const auto& c : j["ports"][0]["counters"])
    if (c["name"] == "vendor_only_counter")
      unknown = c["category"] == "other" && c["source"] == "hw_counters";
  EXPECT_TRUE(unknown);
  const std::string text = watch_text(r, t_.root());
  EXPECT_NE(text.find("rx_prio3_pause"), std::string::npos) << text;
  EXPECT_NE(text.find("(ethtool)"), std::string::npos);
  EXPECT_NE(text.find("Status: warning (exit 1)"), std::string::npos);
}

TEST_F(Watch, FlapAndDiscards) {
  const WatchResult r = watch([&] {
    t_.counter("mlx5_0", "link_downed", 1);
    t_.ethtool_stats("ens1f0np0", {{"rx_discards_phy", 77}, {"link_down_events_phy", 1}});
  });
  EXPECT_EQ(ids(r.findings), (std::multiset<std::string>{"link.flapping", "fabric.discards"}));
  EXPECT_NE(r.findings[0].detail.find("link_downed +1"), std::string::npos) << r.findings[0].detail;
  EXPECT_NE(r.findings[0].detail.find("link_down_events_phy +1"), std::string::npos);
}

}  // namespace

namespace {

// The loss fix follows the link layer: PFC for a RoCE port (it has a netdev), link errors for InfiniBand.
TEST(WatchFix, LossFixFitsTheLinkLayer) {  // 100 lost-packet events: above node::fabric_findings' floor
  node::PortCounters before;
  before.device = "mlx5_0";
  before.port = 1;
  before.counters = {
      node::Counter{"out_of_sequence", node::CounterCategory::Loss, 5, true, node::CounterSource::Hw}};
  node::PortCounters after = before;
  after.counters[0].value = 105;
  const WatchResult ib = evaluate_watch({WatchPort{before, after}}, 1.0);
  ASSERT_EQ(ib.findings.size(), 1u);
  EXPECT_NE(std::string(ib.findings[0].effective_fix()).find("bad cable or optic"), std::string::npos);
  before.netdev = after.netdev = "ens1f0np0";
  const WatchResult roce = evaluate_watch({WatchPort{before, after}}, 1.0);
  ASSERT_EQ(roce.findings.size(), 1u);
  EXPECT_NE(std::string(roce.findings[0].effective_fix()).find("enable PFC on the RoCE priority"),
            std::string::npos);
}

}  // namespace
