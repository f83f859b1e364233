// SPDX-License-Identifier: Apache-2.0
// Snapshots of a whole port (counters/, hw_counters/, the netdev's ethtool statistics) through kept file
// descriptors, and deltas between them, on a ConnectX-7 RoCE fixture.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "fabric_fixtures.h"
#include "railscope/node/ethtool_stats.h"
#include "railscope/node/port_sampler.h"
#include "railscope/node/sysfs.h"

using namespace railscope::node;
using railscope::testing_fixtures::FabricTree;

namespace {

const CounterDelta* find(const std::vector<CounterDelta>& v, std::string_view name) {
  for (const auto& d : v)
    if (d.name == name) return &d;
  return nullptr;
}

TEST(PortSampler, SnapshotsThroughKeptDescriptorsSeeNewValues) {
  FabricTree t("sampler");
  t.roce_port("mlx5_0", "ens1f0np0", "400 Gb/sec (4X NDR)");
  const Sysfs sysfs(t.root());
  auto eth = ethtool_source_for(sysfs);
  PortSampler s(sysfs, "mlx5_0", 1, "ens1f0np0", eth.get());
  EXPECT_EQ(s.files(), 21u + 29u) << "counters/ and hw_counters/ of the fixture";
  EXPECT_EQ(s.kept_open(), s.files());
  const PortCounters a = s.sample();
  EXPECT_TRUE(a.ethtool_available);
  EXPECT_EQ(a.netdev, "ens1f0np0");

  t.counter("mlx5_0", "out_of_sequence", 380, /*hw=*/true);
  t.counter("mlx5_0", "packet_seq_err", 32, /*hw=*/true);
  t.counter("mlx5_0", "port_xmit_data", 1000000);
  t.ethtool_stats("ens1f0np0", {{"rx_prio3_pause", 250}, {"rx_prio3_marked", 3}, {"rx_discards_phy", 9}});
  const PortCounters b = s.sample();
  const auto d = counter_deltas(a, b);
  EXPECT_EQ(category_total(d, CounterCategory::Loss), 412u);
  EXPECT_EQ(category_total(d, CounterCategory::Pause), 250u) << "ethtool statistics are part of the snapshot";
  EXPECT_EQ(category_total(d, CounterCategory::Discard), 9u);
  EXPECT_EQ(category_total(d, CounterCategory::Congestion), 3u);
  EXPECT_EQ(category_total(d, CounterCategory::Traffic), 1000000u);
  ASSERT_NE(find(d, "rx_prio3_pause"), nullptr);
  EXPECT_EQ(find(d, "rx_prio3_pause")->source, CounterSource::Ethtool);
  EXPECT_EQ(find(d, "rx_prio3_pause")->value, 250u);
  ASSERT_NE(find(d, "out_of_sequence"), nullptr);
  EXPECT_EQ(find(d, "out_of_sequence")->source, CounterSource::Hw);
  EXPECT_EQ(find(d, "rx0_packets"), nullptr);
}

TEST(PortSampler, ReadsTheFilesItOpenedNotThePathsAgain) {
  FabricTree t("kept");
  t.ib_port("mlx5_0", "400 Gb/sec (4X NDR)");
  const Sysfs sysfs(t.root());
  PortSampler s(sysfs, "mlx5_0", 1, "", nullptr);
  t.counter("mlx5_0", "symbol_error", 7);
  // The files go away from the tree; the descriptors still read them (a sampler opened once).
  std::filesystem::remove_all(std::filesystem::path(t.root()) / "class/infiniband/mlx5_0/ports/1/counters");
  const PortCounters pc = s.sample();
  bool seen = false;
  for (const auto& c : pc.counters)
    if (c.name == "symbol_error") seen = c.value == 7 && c.category == CounterCategory::Link && !c.hw;
  EXPECT_TRUE(seen);
  EXPECT_FALSE(pc.ethtool_available) << "InfiniBand: no netdev";
  EXPECT_TRUE(read_port_counters(sysfs, "mlx5_0", 1).counters.size() == 29u)
      << "a fresh read no longer sees them";
}

TEST(PortSampler, ResetsAndAChangedEthtoolList) {
  FabricTree t("reset");
  t.roce_port("mlx5_0", "ens1f0np0", "400 Gb/sec (4X NDR)");
  t.counter("mlx5_0", "link_downed", 4);
  const Sysfs sysfs(t.root());
  auto eth = ethtool_source_for(sysfs);
  PortSampler s(sysfs, "mlx5_0", 1, "ens1f0np0", eth.get());
  const PortCounters a = s.sample();
  t.counter("mlx5_0", "link_downed", 1);  // cleared, then one more
  // The netdev gained a statistic (channels changed): the names are fetched again.
  t.ethtool_stats("ens1f0np0", {{"rx2_packets", 1}, {"tx_pause_storm_warning_events", 2}});
  const PortCounters b = s.sample();
  EXPECT_TRUE(b.ethtool_available);
  const auto d = counter_deltas(a, b);
  ASSERT_NE(find(d, "link_downed"), nullptr);
  EXPECT_TRUE(find(d, "link_downed")->reset);
  EXPECT_EQ(find(d, "link_downed")->delta, 1u);
  ASSERT_NE(find(d, "tx_pause_storm_warning_events"), nullptr);
  EXPECT_EQ(find(d, "tx_pause_storm_warning_events")->delta, 2u);
  PortSampler moved = std::move(s);
  EXPECT_EQ(moved.kept_open(), moved.files());
  EXPECT_FALSE(moved.sample().counters.empty());
}

TEST(PortSampler, AMissingPortOrNetdevGivesAnEmptySnapshot) {
  FabricTree t("missing");
  const Sysfs sysfs(t.root());
  auto eth = ethtool_source_for(sysfs);
  PortSampler s(sysfs, "mlx5_9", 1, "nosuch0", eth.get());
  const PortCounters pc = s.sample();
  EXPECT_TRUE(pc.counters.empty());
  EXPECT_FALSE(pc.ethtool_available);
}

}  // namespace

namespace {

// Out of descriptors (RLIMIT_NOFILE just above what is open): fewer files are kept, every value is still
// read.
TEST(PortSampler, OutOfDescriptorsStillReadsEveryCounter) {
  FabricTree t("emfile");
  t.ib_port("mlx5_0", "400 Gb/sec (4X NDR)");
  t.counter("mlx5_0", "symbol_error", 3);
  const Sysfs sysfs(t.root());
  const size_t expected = read_port_counters(sysfs, "mlx5_0", 1).counters.size();
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
  std::set<int> open;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd"))
    open.insert(std::stoi(e.path().filename().string()));
  // The lowest limit that leaves 12 free descriptor numbers: the directory listings and a few counters.
  rlim_t limit = 0;
  for (int free = 0; free < 12; ++limit)
    if (open.count(static_cast<int>(limit)) == 0) ++free;
  rlimit low = old;
  low.rlim_cur = limit;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  PortCounters pc;
  size_t kept = 0;
  size_t files = 0;
  {
    PortSampler s(sysfs, "mlx5_0", 1, "", nullptr);
    kept = s.kept_open();
    files = s.files();
    pc = s.sample();
  }
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &old), 0);
  EXPECT_EQ(files, expected);
  EXPECT_LT(kept, files) << "not every file could be kept open";
  EXPECT_EQ(pc.counters.size(), expected) << "the others are read by opening them each time";
  bool seen = false;
  for (const auto& c : pc.counters) seen = seen || (c.name == "symbol_error" && c.value == 3);
  EXPECT_TRUE(seen);
}

}  // namespace
