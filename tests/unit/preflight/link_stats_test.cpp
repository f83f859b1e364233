// SPDX-License-Identifier: Apache-2.0
// Link outliers per rail (tools/preflight/link_stats.h).
#include <gtest/gtest.h>

// Flags are written as designated initializers naming only what a case sets.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <fmt/format.h>

#include "link_stats.h"

namespace railscope::preflight {
namespace {

LinkMeasurement link(int rail, int from, int to, double GBps, double line = 50) {
  LinkMeasurement m;
  m.rail = rail;
  m.src_node = fmt::format("node{:02}", from);
  m.dst_node = fmt::format("node{:02}", to);
  m.src_nic = m.dst_nic = fmt::format("mlx5_{}", rail);
  m.GBps = GBps;
  m.line_GBps = line;
  m.lat_us = 3;
  return m;
}

TEST(LinkStats, Median) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({3}), 3);
  EXPECT_EQ(median({5, 1, 3}), 3);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
}

TEST(LinkStats, HealthyRailsHaveNoFinding) {
  std::vector<LinkMeasurement> links;
  for (int rail = 0; rail < 8; ++rail)
    for (int i = 0; i < 64; ++i) links.push_back(link(rail, i, (i + 1) % 64, 46.0 + 0.01 * ((i * 7) % 13)));
  const LinkVerdict v = judge_links(links, {});
  EXPECT_TRUE(v.findings.empty()) << diag::one_line(v.findings.front());
  ASSERT_EQ(v.rails.size(), 8u);
  EXPECT_EQ(v.rails[3].reference, "rail");
  EXPECT_NEAR(v.rails[3].median_GBps, 46.06, 0.1);
}

TEST(LinkStats, OutlierNamedWithRailMedianAndLineRate) {
  std::vector<LinkMeasurement> links;
  for (int i = 0; i < 16; ++i) links.push_back(link(3, i, (i + 1) % 16, 46.9));
  links[7].GBps = 18.1;  // node07 -> node08
  const LinkVerdict v = judge_links(links, {});
  ASSERT_EQ(v.findings.size(), 1u);
  EXPECT_EQ(v.findings[0].id(), "link.slow");
  EXPECT_EQ(v.findings[0].detail,
            "node07/mlx5_3 → node08/mlx5_3: 18.1 GB/s, 36 % of line rate (50.0 GB/s), median of rail 3 is "
            "46.9 GB/s");
}

TEST(LinkStats, BelowLineRateEvenWhenTheWholeRailIs) {
  // Every link of rail 0 at 40 % of line rate: the median finds nothing, the line rate does.
  std::vector<LinkMeasurement> links;
  for (int i = 0; i < 4; ++i) links.push_back(link(0, i, (i + 1) % 4, 20));
  LinkVerdict v = judge_links(links, {});
  EXPECT_EQ(v.findings.size(), 4u);
  v = judge_links(links, {.min_line_percent = 0});
  EXPECT_TRUE(v.findings.empty());
}

TEST(LinkStats, TwoNodesCompareAcrossRailsThenLineRate) {
  // Two nodes, two rails, both directions: 2 links per rail, no majority within a rail; the four links
  // at the same line rate give one. Rail 1's B -> A is rate-limited.
  std::vector<LinkMeasurement> links{link(0, 0, 1, 0.030, 0.01), link(0, 1, 0, 0.031, 0.01),
                                     link(1, 0, 1, 0.029, 0.01), link(1, 1, 0, 0.0001, 0.01)};
  LinkVerdict v = judge_links(links, {});
  ASSERT_EQ(v.findings.size(), 1u) << diag::one_line(v.findings.back());
  EXPECT_NE(v.findings[0].detail.find("node01/mlx5_1 → node00/mlx5_1"), std::string::npos)
      << v.findings[0].detail;
  EXPECT_NE(v.findings[0].detail.find("on rail 1, median of all rails at this line rate"), std::string::npos);
  // Only two links at all (one rail): no majority, the line rate decides.
  links = {link(0, 0, 1, 0.030, 0.01), link(0, 1, 0, 0.0001, 0.01)};
  v = judge_links(links, {});
  ASSERT_EQ(v.findings.size(), 1u);
  EXPECT_NE(v.findings[0].detail.find("no majority, compared with line rate"), std::string::npos);
  EXPECT_NE(v.findings[0].detail.find("node01/mlx5_0"), std::string::npos);
  // Two healthy links: nothing, whatever their ratio to each other.
  links = {link(0, 0, 1, 40, 50), link(0, 1, 0, 31, 50)};
  EXPECT_TRUE(judge_links(links, {}).findings.empty());
}

TEST(LinkStats, FailedLinkAndHighLatency) {
  std::vector<LinkMeasurement> links;
  for (int i = 0; i < 8; ++i) links.push_back(link(2, i, (i + 1) % 8, 45));
  links[2].error = "connect timed out";
  links[5].lat_us = 40;
  const LinkVerdict v = judge_links(links, {});
  ASSERT_EQ(v.findings.size(), 2u);
  EXPECT_EQ(v.findings[0].id(), "link.failed");
  EXPECT_NE(v.findings[0].detail.find("node02/mlx5_2 → node03/mlx5_2 (rail 2): connect timed out"),
            std::string::npos);
  EXPECT_EQ(v.findings[1].id(), "link.high_latency");
  EXPECT_EQ(v.rails[0].links, 7u);
}

}  // namespace
}  // namespace railscope::preflight
