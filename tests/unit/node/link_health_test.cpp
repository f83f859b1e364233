// SPDX-License-Identifier: Apache-2.0
// Link health on fixture nodes laid out as real ones (fabric_fixtures.h): a healthy 8-port NDR node, the
// same with one port trained at 2X or at HDR, with one rail down, a flapping port, and ConnectX-7 400GbE
// RoCE ports whose capability comes from their ethtool link modes.
#include <gtest/gtest.h>

#include <set>

#include "fabric_fixtures.h"
#include "railscope/node/ethtool_stats.h"
#include "railscope/node/inventory.h"
#include "railscope/node/link_health.h"
#include "railscope/node/port_sampler.h"
#include "railscope/node/sysfs.h"

using namespace railscope;
using namespace railscope::node;
using railscope::testing_fixtures::FabricTree;

namespace {

LinkHealth check(const FabricTree& t, const PortFilter& filter = {}) {
  const Sysfs sysfs(t.root());
  auto eth = ethtool_source_for(sysfs);
  return check_link_health(discover_sysfs(t.root()), sysfs, eth.get(), filter);
}

std::multiset<std::string> ids(const LinkHealth& h) {
  std::multiset<std::string> out;
  for (const auto& f : h.findings) out.emplace(f.id());
  return out;
}

const PortLink& port(const LinkHealth& h, const std::string& dev) {
  for (const auto& p : h.ports)
    if (p.device == dev) return p;
  throw std::runtime_error("no port " + dev);
}

TEST(RateText, ParsesTheKernelsRateLine) {
  const RateText ndr = parse_rate_text("400 Gb/sec (4X NDR)");
  EXPECT_EQ(ndr.mbps, 400000);
  EXPECT_EQ(ndr.width, 4);
  EXPECT_EQ(ndr.lane, "NDR");
  const RateText sdr = parse_rate_text("2.5 Gb/sec (1X SDR)");
  EXPECT_EQ(sdr.mbps, 2500);
  EXPECT_EQ(sdr.width, 1);
  EXPECT_EQ(parse_rate_text("800 Gb/sec (4X XDR)").lane, "XDR");
  EXPECT_EQ(parse_rate_text("garbage").width, 0);
  EXPECT_EQ(parse_rate_text("100 Gb/sec (X)").width, 0);
  EXPECT_EQ(lane_name(100000), "NDR");
  EXPECT_EQ(lane_name(3), "");
}

TEST(LinkHealth, HealthyNdrNodeHasNoFinding) {
  FabricTree t("ndr8");
  testing_fixtures::healthy_ndr8(t);
  const LinkHealth h = check(t);
  ASSERT_EQ(h.ports.size(), 8u);
  EXPECT_TRUE(h.findings.empty()) << diag::one_line(h.findings.front());
  for (const auto& p : h.ports) {
    EXPECT_EQ(p.verdict, "ok") << p.device;
    EXPECT_EQ(p.speed_mbps, 400000);
    EXPECT_EQ(p.width, 4);
    EXPECT_EQ(p.lane, "NDR");
    EXPECT_EQ(p.siblings, 7);
    EXPECT_EQ(p.siblings_active, 7);
    EXPECT_EQ(p.capable_mbps, 0) << "InfiniBand: sysfs says no capability";
  }
}

TEST(LinkHealth, OnePortAt2XIsDegraded) {
  FabricTree t("ndr8-2x");
  testing_fixtures::healthy_ndr8(t);
  t.ib_port("mlx5_3", "200 Gb/sec (2X NDR)");
  const LinkHealth h = check(t);
  ASSERT_EQ(ids(h), std::multiset<std::string>{"link.degraded"});
  EXPECT_NE(h.findings[0].detail.find("mlx5_3:1 trained at 200 Gb/s (2X NDR)"), std::string::npos)
      << h.findings[0].detail;
  EXPECT_NE(h.findings[0].detail.find("400 Gb/s"), std::string::npos);
  EXPECT_EQ(port(h, "mlx5_3").verdict, "degraded");
  EXPECT_EQ(port(h, "mlx5_2").verdict, "ok");
}

TEST(LinkHealth, OnePortAtHdrIsDegraded) {
  FabricTree t("ndr8-hdr");
  testing_fixtures::healthy_ndr8(t);
  t.ib_port("mlx5_5", "200 Gb/sec (4X HDR)");
  const LinkHealth h = check(t);
  ASSERT_EQ(ids(h), std::multiset<std::string>{"link.degraded"});
  EXPECT_NE(h.findings[0].detail.find("mlx5_5:1 trained at 200 Gb/s (4X HDR)"), std::string::npos);
}

TEST(LinkHealth, ARailDownWhileItsSiblingsRunIsNamed) {
  FabricTree t("ndr8-down");
  testing_fixtures::healthy_ndr8(t);
  t.ib_port("mlx5_6", "10 Gb/sec (4X SDR)", /*down=*/true);
  const LinkHealth h = check(t);
  ASSERT_EQ(ids(h), std::multiset<std::string>{"link.rail_down"});
  EXPECT_NE(h.findings[0].detail.find("mlx5_6:1 is DOWN (physical state Polling) while 7 of its 7"),
            std::string::npos)
      << h.findings[0].detail;
  EXPECT_EQ(port(h, "mlx5_6").verdict, "rail_down");
  EXPECT_EQ(port(h, "mlx5_0").siblings_active, 6);
}

TEST(LinkHealth, AnotherNicModelIsNoSibling) {
  FabricTree t("ndr8-cx6");
  testing_fixtures::healthy_ndr8(t);
  t.ib_port("mlx5_8", "200 Gb/sec (4X HDR)", false, "0x101b");  // a ConnectX-6 HDR storage port
  const LinkHealth h = check(t);
  EXPECT_TRUE(h.findings.empty()) << diag::one_line(h.findings.front());
  EXPECT_EQ(port(h, "mlx5_8").siblings, 0);
  EXPECT_EQ(port(h, "mlx5_8").verdict, "ok");
}

TEST(LinkHealth, LinkCountersNotZeroSinceBoot) {
  FabricTree t("ndr8-boot");
  testing_fixtures::healthy_ndr8(t);
  t.counter("mlx5_1", "link_downed", 2);
  t.counter("mlx5_1", "symbol_error", 5);
  t.counter("mlx5_4", "link_error_recovery", 1);
  t.counter("mlx5_2", "port_xmit_data", 99999);  // traffic is no error
  const LinkHealth h = check(t);
  EXPECT_EQ(ids(h), (std::multiset<std::string>{"link.downed_since_boot", "link.errors_since_boot",
                                                "link.downed_since_boot"}));
  EXPECT_NE(h.findings[0].detail.find("mlx5_1:1: link_downed 2"), std::string::npos) << h.findings[0].detail;
  EXPECT_NE(h.findings[1].detail.find("symbol_error 5"), std::string::npos);
  EXPECT_NE(h.findings[2].detail.find("mlx5_4:1: link_error_recovery 1"), std::string::npos);
  for (const auto& f : h.findings) EXPECT_EQ(f.severity, diag::Severity::Info) << "since boot: no date";
  // Ports NCCL_IB_HCA does not select give no finding.
  const LinkHealth only0 = check(t, [](const Device& d, const Port&) { return d.name == "mlx5_0"; });
  EXPECT_TRUE(only0.findings.empty());
  EXPECT_EQ(only0.ports.size(), 8u);
}

TEST(LinkHealth, FlappingPortBetweenTwoSnapshots) {
  FabricTree t("flap");
  testing_fixtures::healthy_ndr8(t);
  t.counter("mlx5_2", "link_downed", 1);
  const Sysfs sysfs(t.root());
  PortSampler s(sysfs, "mlx5_2", 1, "", nullptr);
  const PortCounters a = s.sample();
  EXPECT_TRUE(link_findings_between(a, s.sample(), 1.0).empty()) << "nothing rose";
  t.counter("mlx5_2", "link_downed", 4);
  t.counter("mlx5_2", "symbol_error", 120);
  const PortCounters b = s.sample();
  const auto f = link_findings_between(a, b, 2.0);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].id(), "link.flapping");
  EXPECT_NE(f[0].detail.find("mlx5_2:1: link_downed +3 in 2.0 s"), std::string::npos) << f[0].detail;
  EXPECT_EQ(f[1].id(), "link.errors_rising");
  EXPECT_NE(f[1].detail.find("symbol_error +120"), std::string::npos);
}

TEST(LinkHealth, RoceCapabilityFromEthtoolLinkModes) {
  FabricTree t("roce");
  t.roce_port("mlx5_0", "ens1f0np0", "400 Gb/sec (4X NDR)");
  t.roce_port("mlx5_1", "ens2f0np0", "400 Gb/sec (4X NDR)");
  LinkHealth h = check(t);
  EXPECT_TRUE(h.findings.empty()) << diag::one_line(h.findings.front());
  EXPECT_EQ(port(h, "mlx5_0").capable_mbps, 400000);

  t.roce_port("mlx5_1", "ens2f0np0", "200 Gb/sec (4X HDR)");
  h = check(t);
  ASSERT_EQ(ids(h), std::multiset<std::string>{"link.degraded"});
  EXPECT_NE(h.findings[0].detail.find("the port supports 400 Gb/s"), std::string::npos)
      << h.findings[0].detail;

  // Both at 200 on 400G NICs: the fabric's rate, said as information.
  t.roce_port("mlx5_0", "ens1f0np0", "200 Gb/sec (4X HDR)");
  h = check(t);
  EXPECT_EQ(ids(h), (std::multiset<std::string>{"link.below_capability", "link.below_capability"}));
  for (const auto& f : h.findings) EXPECT_EQ(f.severity, diag::Severity::Info);
}

TEST(LinkHealth, RoceLinkErrorsFromEthtool) {
  FabricTree t("roce-crc");
  t.roce_port("mlx5_0", "ens1f0np0", "400 Gb/sec (4X NDR)");
  t.ethtool_stats("ens1f0np0", {{"rx_crc_errors_phy", 3}, {"rx_corrected_bits_phy", 999999}});
  const LinkHealth h = check(t);
  ASSERT_EQ(ids(h), std::multiset<std::string>{"link.errors_since_boot"});
  EXPECT_NE(h.findings[0].detail.find("rx_crc_errors_phy 3"), std::string::npos) << h.findings[0].detail;
  EXPECT_EQ(h.findings[0].detail.find("corrected"), std::string::npos) << "FEC at work is no error";
}

}  // namespace

namespace {

// A ConnectX-6 (0x101b) HDR node: eight 200 Gb/s 4X HDR rails; one that trained at EDR is degraded.
TEST(LinkHealth, ConnectX6HdrNode) {
  FabricTree t("hdr8");
  for (int i = 0; i < 8; ++i) t.ib_port("mlx5_" + std::to_string(i), "200 Gb/sec (4X HDR)", false, "0x101b");
  LinkHealth h = check(t);
  EXPECT_TRUE(h.findings.empty()) << diag::one_line(h.findings.front());
  EXPECT_EQ(port(h, "mlx5_7").lane, "HDR");
  t.ib_port("mlx5_7", "100 Gb/sec (4X EDR)", false, "0x101b");
  h = check(t);
  ASSERT_EQ(ids(h), std::multiset<std::string>{"link.degraded"});
  EXPECT_NE(h.findings[0].detail.find("mlx5_7:1 trained at 100 Gb/s (4X EDR)"), std::string::npos)
      << h.findings[0].detail;
  EXPECT_NE(h.findings[0].detail.find("device 0x101b) runs 200 Gb/s"), std::string::npos);
}

}  // namespace
