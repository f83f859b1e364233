// SPDX-License-Identifier: Apache-2.0
// ethtool statistics: the category table for mlx5's ethtool names, the fixture source laid out as a
// ConnectX-7 netdev answers, the ioctl source on interfaces without statistics, and the port-wide filter.
#include <gtest/gtest.h>

#include <algorithm>

#include "fabric_fixtures.h"
#include "railscope/node/ethtool_stats.h"
#include "railscope/node/sysfs.h"

using namespace railscope::node;
using railscope::testing_fixtures::FabricTree;

namespace {

const Counter* find(const std::vector<Counter>& v, std::string_view name) {
  for (const auto& c : v)
    if (c.name == name) return &c;
  return nullptr;
}

TEST(EthtoolCategory, Mlx5EthtoolNamesMapToWhatTheyMean) {
  EXPECT_EQ(counter_category("rx_prio3_pause"), CounterCategory::Pause);
  EXPECT_EQ(counter_category("tx_prio3_pause"), CounterCategory::Pause);
  EXPECT_EQ(counter_category("rx_prio3_pause_duration"), CounterCategory::Pause);
  EXPECT_EQ(counter_category("rx_prio3_pause_transition"), CounterCategory::Pause);
  EXPECT_EQ(counter_category("tx_pause_storm_error_events"), CounterCategory::Pause);
  EXPECT_EQ(counter_category("rx_pause_ctrl_phy"), CounterCategory::Pause);
  EXPECT_EQ(counter_category("rx_discards_phy"), CounterCategory::Discard);
  EXPECT_EQ(counter_category("tx_discards_phy"), CounterCategory::Discard);
  EXPECT_EQ(counter_category("rx_out_of_buffer"), CounterCategory::Discard);
  EXPECT_EQ(counter_category("rx_prio3_buf_discard"), CounterCategory::Discard);
  EXPECT_EQ(counter_category("rx_prio3_cong_discard"), CounterCategory::Discard);
  EXPECT_EQ(counter_category("rx_if_down_packets"), CounterCategory::Discard) << "not traffic";
  EXPECT_EQ(counter_category("rx_oversize_pkts_phy"), CounterCategory::Discard) << "not traffic";
  EXPECT_EQ(counter_category("rx_prio3_marked"), CounterCategory::Congestion) << "ECN marks of the rx buffer";
  EXPECT_EQ(counter_category("rx_buffer_passed_thres_phy"), CounterCategory::Congestion);
  EXPECT_EQ(counter_category("rx_crc_errors_phy"), CounterCategory::Link);
  EXPECT_EQ(counter_category("rx_symbol_err_phy"), CounterCategory::Link);
  EXPECT_EQ(counter_category("link_down_events_phy"), CounterCategory::Link);
  EXPECT_EQ(counter_category("rx_undersize_pkts_phy"), CounterCategory::Link) << "an error, not traffic";
  EXPECT_EQ(counter_category("rx_corrected_bits_phy"), CounterCategory::Other) << "FEC at work, not trouble";
  EXPECT_EQ(counter_category("rx_err_lane_2_phy"), CounterCategory::Other) << "pre-FEC, not trouble";
  EXPECT_EQ(counter_category("req_transport_retries_exceeded"), CounterCategory::Loss);
  EXPECT_EQ(counter_category("rx_vport_rdma_unicast_bytes"), CounterCategory::Traffic);
  EXPECT_EQ(counter_category("rx_prio3_packets"), CounterCategory::Traffic);
  EXPECT_EQ(counter_category("rx_pci_signal_integrity"), CounterCategory::Other) << "PCIe, not the fabric";
  EXPECT_EQ(to_string(CounterSource::Ethtool), "ethtool");
}

TEST(EthtoolCategory, CounterValuesUpTo64Bits) {
  EXPECT_EQ(parse_counter_value("18446744073709551615\n"), UINT64_MAX);
  EXPECT_EQ(parse_counter_value(" 42 "), 42u);
  EXPECT_FALSE(parse_counter_value("18446744073709551616"));
  EXPECT_FALSE(parse_counter_value("12 x"));
  EXPECT_FALSE(parse_counter_value("-1"));
  EXPECT_FALSE(parse_counter_value(""));
}

TEST(EthtoolStats, PortWideFilterAndLinkModes) {
  EXPECT_FALSE(is_port_wide_stat("rx0_packets"));
  EXPECT_FALSE(is_port_wide_stat("tx12_xmit_more"));
  EXPECT_FALSE(is_port_wide_stat("ch3_arm"));
  EXPECT_FALSE(is_port_wide_stat("rx_queue_0_xdp_packets")) << "veth per-queue";
  EXPECT_FALSE(is_port_wide_stat("ptp_cq0_abort"));
  EXPECT_TRUE(is_port_wide_stat("tx_queue_dropped"));
  EXPECT_TRUE(is_port_wide_stat("rx_prio3_pause"));
  EXPECT_TRUE(is_port_wide_stat("rx_64_bytes_phy"));
  EXPECT_TRUE(is_port_wide_stat("peer_ifindex"));
  EXPECT_EQ(link_mode_mbps("400000baseCR4/Full"), 400000);
  EXPECT_EQ(link_mode_mbps("10baseT/Half"), 10);
  EXPECT_EQ(link_mode_mbps("Autoneg"), 0);
  EXPECT_EQ(link_mode_mbps("400000"), 0);
  EXPECT_TRUE(valid_ifname("ens1f0np0"));
  EXPECT_FALSE(valid_ifname("../x"));
  EXPECT_FALSE(valid_ifname("a-name-longer-than-ifnamsiz"));
}

TEST(EthtoolStats, FixtureReadsAConnectX7NetdevLikeEthtoolPrintsIt) {
  FabricTree t("ethtool");
  t.roce_port("mlx5_0", "ens1f0np0", "400 Gb/sec (4X NDR)");
  t.ethtool_stats("ens1f0np0", {{"rx_prio3_pause", 17}, {"rx_discards_phy", 5}});
  auto src = ethtool_source_for(Sysfs(t.root()));
  const auto counters = read_ethtool_counters(*src, "ens1f0np0");
  const Counter* pause = find(counters, "rx_prio3_pause");
  ASSERT_NE(pause, nullptr);
  EXPECT_EQ(pause->value, 17u);
  EXPECT_EQ(pause->category, CounterCategory::Pause);
  EXPECT_EQ(pause->source, CounterSource::Ethtool);
  EXPECT_FALSE(pause->hw);
  ASSERT_NE(find(counters, "rx_discards_phy"), nullptr);
  EXPECT_EQ(find(counters, "rx_discards_phy")->value, 5u);
  EXPECT_EQ(find(counters, "rx0_packets"), nullptr) << "per-channel statistics are left out";
  EXPECT_EQ(find(counters, "ch0_arm"), nullptr);
  EXPECT_TRUE(std::is_sorted(counters.begin(), counters.end(),
                             [](const Counter& a, const Counter& b) { return a.name < b.name; }));
  const auto link = src->link_settings("ens1f0np0");
  ASSERT_TRUE(link);
  EXPECT_EQ(link->speed_mbps, 400000);
  EXPECT_EQ(link->max_supported_mbps, 400000);
  EXPECT_EQ(link->supported.size(), 3u);
  EXPECT_TRUE(read_ethtool_counters(*src, "nosuch0").empty()) << "no statistics: not available";
  EXPECT_FALSE(src->link_settings("nosuch0"));
  EXPECT_TRUE(read_ethtool_counters(*src, "../../etc").empty());
}

TEST(EthtoolStats, IoctlOnInterfacesWithoutStatisticsIsNotAnError) {
  auto src = make_ioctl_ethtool_source();
  EXPECT_TRUE(src->stat_names("lo").empty()) << "loopback has no ethtool statistics";
  EXPECT_TRUE(src->stat_names("railscope-none").empty());
  EXPECT_FALSE(src->stat_values("railscope-none", 3));
  EXPECT_FALSE(src->link_settings("railscope-none"));
  EXPECT_TRUE(read_ethtool_counters(*src, "lo").empty());
}

}  // namespace
