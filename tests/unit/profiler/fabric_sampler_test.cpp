// SPDX-License-Identifier: Apache-2.0
// The profiler's fabric sampler reads a RoCE port as the net plugin and `doctor --watch` read it:
// on mlx5 the PFC pause counters live in the netdev's ethtool statistics, not in
// hw_counters/, so a window must carry them. The node is the ConnectX-7 400GbE RoCE fixture of
// tests/unit/node/fabric_fixtures.h (which says where each file's layout comes from).
#include "plugin/profiler/core/fabric_sampler.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "plugin/profiler/core/jsonl_format.h"
#include "railscope/node/inventory.h"
#include "unit/node/fabric_fixtures.h"

namespace railscope::profiler {
namespace {

using testing_fixtures::FabricTree;

size_t open_descriptors() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

const PortWindow* find_port(const FabricWindow& w, const std::string& name) {
  for (const PortWindow& p : w.ports)
    if (p.name() == name) return &p;
  return nullptr;
}

TEST(ProfilerFabricSampler, RocePauseFromEthtoolReachesTheWindow) {
  FabricTree t("profiler-roce");
  t.roce_port("mlx5_0", "ens1f0np0", "400 Gb/sec (4X NDR)");
  t.roce_port("mlx5_1", "ens2f0np0", "400 Gb/sec (4X NDR)");
  const size_t fds_before = open_descriptors();
  FabricSampler s;
  s.start(node::discover_sysfs(t.root()), node::parse_hca_filter(""), t.root(), 1000);
  ASSERT_TRUE(s.active());
  EXPECT_EQ(open_descriptors(), fds_before) << "no descriptor kept between windows";

  // The switch pauses mlx5_1's priority 3 (the RoCE priority) and the NIC counts it in ethtool only.
  t.ethtool_stats("ens2f0np0", {{"rx_prio3_pause", 2500}, {"rx_prio3_pause_duration", 900}});
  const FabricWindow w = s.next_window(2000);
  EXPECT_EQ(open_descriptors(), fds_before);
  const PortWindow* paused = find_port(w, "mlx5_1:1");
  const PortWindow* clean = find_port(w, "mlx5_0:1");
  ASSERT_NE(paused, nullptr);
  ASSERT_NE(clean, nullptr);
  EXPECT_EQ(paused->total(node::CounterCategory::Pause), 3400u);
  EXPECT_EQ(clean->total(node::CounterCategory::Pause), 0u);
  const std::string line = format_fabric(w);
  EXPECT_NE(line.find("\"rx_prio3_pause\":2500"), std::string::npos) << line;
  EXPECT_NE(line.find("\"pause\":3400"), std::string::npos) << line;
  EXPECT_NE(fabric_trouble(w).find("PFC pause on mlx5_1:1: 3400 (rx_prio3_pause +2500"), std::string::npos)
      << fabric_trouble(w);

  // The next window starts from the last reading: no pause since.
  const FabricWindow quiet = s.next_window(3000);
  ASSERT_NE(find_port(quiet, "mlx5_1:1"), nullptr);
  EXPECT_EQ(find_port(quiet, "mlx5_1:1")->total(node::CounterCategory::Pause), 0u);
  EXPECT_EQ(fabric_trouble(quiet), "");
}

}  // namespace
}  // namespace railscope::profiler
