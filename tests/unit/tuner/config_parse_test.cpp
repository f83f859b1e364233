// SPDX-License-Identifier: Apache-2.0
// What a good config file turns into: rules (both formats), measured figures and node facts.
#include <gtest/gtest.h>

#include "plugin/tuner/config/config.h"
#include "plugin/tuner/config/values.h"

namespace railscope::tuner {
namespace {

TEST(ConfigParse, RailscopeRulesWithRangesAndSuffixes) {
  const auto p = parse_config_text(
      "# comment line\n"
      "rule coll=allreduce bytes=0..64K nodes=2.. algo=tree proto=ll   # trailing comment\n"
      "rule coll=allgather,reducescatter bytes=1M.. ranks=..64 pipeops=1 regbuff=1 proto=simple channels=16\n"
      "RULE coll=broadcast,reduce bytes=1G..4G nodes=1 chunk=2M\n",
      "a.conf");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0].to_string();
  ASSERT_EQ(p.config.rules.size(), 3u);
  const Rule& r0 = p.config.rules[0];
  EXPECT_EQ(r0.coll_mask, 1u << kAllReduce);
  EXPECT_EQ(r0.bytes.lo, 0u);
  EXPECT_EQ(r0.bytes.hi, 65536u);
  EXPECT_EQ(r0.nodes.lo, 2u);
  EXPECT_EQ(r0.algo, kTree);
  EXPECT_EQ(r0.proto, kLL);
  EXPECT_EQ(r0.line, 2);
  const Rule& r1 = p.config.rules[1];
  EXPECT_EQ(r1.coll_mask, (1u << kAllGather) | (1u << kReduceScatter));
  EXPECT_EQ(r1.ranks.hi, 64u);
  EXPECT_EQ(r1.pipe_ops.lo, 1u);
  EXPECT_EQ(r1.pipe_ops.hi, 1u);
  EXPECT_EQ(r1.reg_buff, 1);
  EXPECT_EQ(r1.algo, -1);
  EXPECT_EQ(r1.channels, 16);
  EXPECT_TRUE(r1.matches(kAllGather, 2 << 20, 4, 32, 1, 1));
  EXPECT_FALSE(r1.matches(kAllGather, 2 << 20, 4, 32, 1, 0));
  EXPECT_FALSE(r1.matches(kAllGather, 2 << 20, 4, 128, 1, 1));
  EXPECT_FALSE(r1.matches(kAllReduce, 2 << 20, 4, 32, 1, 1));
  EXPECT_EQ(p.config.rules[2].chunk, 2u << 20);
  EXPECT_EQ(p.config.rules[2].coll_mask, (1u << kBroadcast) | (1u << kReduce));
}

TEST(ConfigParse, NonOverlappingNeighboursAreFine) {
  const auto p = parse_config_text(
      "rule coll=allreduce bytes=0..65535 algo=tree\n"
      "rule coll=allreduce bytes=65536.. algo=ring\n"
      "rule coll=allreduce bytes=0..65535 nodes=1 algo=ring\n",  // overlaps line 1 (nodes any)
      "b.conf");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].line, 3);
  EXPECT_EQ(p.config.rules.size(), 2u);
}

TEST(ConfigParse, RegbuffSplitsOtherwiseEqualRules) {
  const auto p = parse_config_text(
      "rule coll=allreduce regbuff=0 algo=tree\n"
      "rule coll=allreduce regbuff=1 algo=ring\n",
      "c.conf");
  EXPECT_TRUE(p.errors.empty());
  EXPECT_EQ(p.config.rules.size(), 2u);
}

TEST(ConfigParse, NcclExampleCsvWithEightNineAndTenFields) {
  const auto p = parse_config_text(
      "# NCCL tuner configuration\n"
      "allreduce,0,65536,tree,ll,-1,2,-1\n"
      "allreduce,65537,1048576,ring,ll128,8,2,16,-1\n"
      "allgather,0,4294967295,ring,simple,4,-1,-1,2,1\n"
      "broadcast,0,1024,ring,ll,-1,-1,-1\r\n"
      "allreduce,0,65536,ring,simple,-1,-1,-1\n",  // overlaps line 2: fine in CSV (first match wins)
      "nccl_tuner.conf");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0].to_string();
  ASSERT_EQ(p.config.rules.size(), 5u);
  const Rule& r = p.config.rules[1];
  EXPECT_EQ(r.format, RuleFormat::NcclCsv);
  EXPECT_EQ(r.bytes.lo, 65537u);
  EXPECT_EQ(r.bytes.hi, 1048576u);
  EXPECT_EQ(r.algo, kRing);
  EXPECT_EQ(r.proto, kLL128);
  EXPECT_EQ(r.channels, 8);
  EXPECT_EQ(r.nodes.lo, 2u);
  EXPECT_EQ(r.ranks.lo, 16u);
  EXPECT_TRUE(r.pipe_ops.is_any());
  const Rule& g = p.config.rules[2];
  EXPECT_EQ(g.pipe_ops.lo, 2u);
  EXPECT_EQ(g.reg_buff, 1);
  EXPECT_EQ(p.config.rules[0].channels, 0);  // -1: NCCL's count
  EXPECT_TRUE(p.config.rules[0].ranks.is_any());
}

TEST(ConfigParse, MeasuredFiguresAndNodeFacts) {
  const auto p = parse_config_text(
      "measure coll=allreduce,allgather algo=ring proto=simple nodes=4 lat_us=30.5 busbw_gbps=180\n"
      "node nics=4 nic_gbps=400 link_layer=roce intra=pcie intra_gbps=20\n",
      "m.conf");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0].to_string();
  ASSERT_EQ(p.config.measured.size(), 2u);
  EXPECT_EQ(p.config.measured[0].figure.coll, kAllGather);  // one entry per collective, in NCCL's order
  EXPECT_EQ(p.config.measured[1].figure.coll, kAllReduce);
  EXPECT_DOUBLE_EQ(p.config.measured[0].figure.lat_us, 30.5);
  EXPECT_DOUBLE_EQ(p.config.measured[0].figure.busbw_gbs, 180);
  EXPECT_EQ(p.config.node.nics, 4);
  EXPECT_EQ(p.config.node.nic_gbps, 400);
  EXPECT_EQ(p.config.node.layer, LinkLayer::Ethernet);
  EXPECT_EQ(p.config.node.intra, IntraLink::Pcie);
  EXPECT_EQ(p.config.node.nic_source, "config");
}

// Units: GBps = 10^9 bytes/s, gbit = 10^9 bits/s. The new keys mean what the old ones did;
// old files still read (busbw_gbps/intra_gbps are the same keys ignoring case; nic_gbps is a deprecated
// spelling of nic_gbit, noted once); nic_GBps would mean bytes and is refused.
TEST(ConfigParse, UnitKeysMeanOneThing) {
  const auto now = parse_config_text(
      "measure coll=allreduce algo=ring proto=simple nodes=4 lat_us=30.5 busbw_GBps=180\n"
      "node nics=4 nic_gbit=400 intra_GBps=20\n",
      "new.conf");
  ASSERT_TRUE(now.errors.empty()) << now.errors[0].to_string();
  EXPECT_DOUBLE_EQ(now.config.measured[0].figure.busbw_gbs, 180);
  EXPECT_EQ(now.config.node.nic_gbps, 400);   // Gbit/s
  EXPECT_EQ(now.config.node.intra_gbps, 20);  // GB/s
  EXPECT_TRUE(now.config.deprecations.empty());

  const auto old = parse_config_text("node nics=4 nic_gbps=400 intra_gbps=20\n", "old.conf");
  ASSERT_TRUE(old.errors.empty()) << old.errors[0].to_string();
  EXPECT_EQ(old.config.node.nic_gbps, 400);
  EXPECT_EQ(old.config.node.intra_gbps, 20);
  ASSERT_EQ(old.config.deprecations.size(), 1u);
  EXPECT_EQ(old.config.deprecations[0],
            "old.conf:1:13: nic_gbps= is deprecated: write nic_gbit= (same value, Gbit/s)");

  const auto bytes = parse_config_text("node nics=4 nic_GBps=50\n", "bytes.conf");
  ASSERT_EQ(bytes.errors.size(), 1u);
  EXPECT_EQ(bytes.errors[0].to_string(),
            "bytes.conf:1:13: 'nic_GBps' would be GB/s (GBps = 10^9 bytes/s); the NIC rate is nic_gbit=, in "
            "Gbit/s");
  EXPECT_FALSE(bytes.config.node.nic_gbps.has_value());

  const auto missing =
      parse_config_text("measure coll=allreduce algo=ring proto=simple nodes=4 lat_us=3\n", "m.conf");
  ASSERT_EQ(missing.errors.size(), 1u);
  EXPECT_NE(missing.errors[0].message.find("busbw_GBps="), std::string::npos) << missing.errors[0].message;
}

TEST(ConfigValues, SizesAndRanges) {
  EXPECT_EQ(std::get<0>(values::size("64K")), 65536u);
  EXPECT_EQ(std::get<0>(values::size("3g")), 3ull << 30);
  EXPECT_EQ(std::get<0>(values::size("1T")), 1ull << 40);
  EXPECT_FALSE(values::ok(values::size("")));
  EXPECT_FALSE(values::ok(values::size("-1")));
  EXPECT_FALSE(values::ok(values::size("K")));
  EXPECT_FALSE(values::ok(values::size("20000000T")));
  const Range any = std::get<0>(values::range("*"));
  EXPECT_TRUE(any.is_any());
  const Range one = std::get<0>(values::range("7"));
  EXPECT_TRUE(one.contains(7));
  EXPECT_FALSE(one.contains(8));
  EXPECT_TRUE(std::get<0>(values::range("..1K")).contains(0));
  EXPECT_FALSE(std::get<0>(values::range("1K..")).contains(1023));
}

}  // namespace
}  // namespace railscope::tuner
