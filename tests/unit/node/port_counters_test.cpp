// SPDX-License-Identifier: Apache-2.0
// Port counters read from fake sysfs trees laid out as the kernel publishes them for a ConnectX (mlx5)
// RoCE port and a soft-RoCE (rxe) port, the one category table, and deltas between snapshots.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "railscope/node/port_counters.h"
#include "railscope/node/sysfs.h"

namespace fs = std::filesystem;
using namespace railscope::node;

namespace {

class PortCountersTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("railscope-counters-" + std::to_string(::getpid()) + "-" +
                                         testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void put(const std::string& rel, const std::string& content) {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << content;
  }
  // Counter files of an mlx5 port (names as drivers/infiniband/hw/mlx5/counters.c publishes them).
  void mlx5(uint64_t retrans, uint64_t ecn) {
    const std::string p = "class/infiniband/mlx5_0/ports/1/";
    put(p + "counters/symbol_error", "0\n");
    put(p + "counters/link_downed", "1\n");
    put(p + "counters/port_xmit_discards", "0\n");
    put(p + "counters/port_xmit_data", "123456789\n");
    put(p + "hw_counters/out_of_sequence", std::to_string(retrans) + "\n");
    put(p + "hw_counters/local_ack_timeout_err", "0\n");
    put(p + "hw_counters/np_ecn_marked_roce_packets", std::to_string(ecn) + "\n");
    put(p + "hw_counters/rp_cnp_handled", "7\n");
    put(p + "hw_counters/lifespan", "10\n");
  }
  Sysfs sysfs() const { return Sysfs(root_.string()); }
  fs::path root_;
};

TEST(CounterCategory, TheProvidersNamesMapToWhatTheyMean) {
  EXPECT_EQ(counter_category("out_of_sequence"), CounterCategory::Loss);
  EXPECT_EQ(counter_category("rcvd_seq_err"), CounterCategory::Loss) << "rxe";
  EXPECT_EQ(counter_category("local_ack_timeout_err"), CounterCategory::Loss);
  EXPECT_EQ(counter_category("rdm_retrans_pkts"), CounterCategory::Loss) << "efa";
  EXPECT_EQ(counter_category("np_ecn_marked_roce_packets"), CounterCategory::Congestion);
  EXPECT_EQ(counter_category("np_cnp_sent"), CounterCategory::Congestion);
  EXPECT_EQ(counter_category("rx_prio3_pause"), CounterCategory::Pause) << "ethtool-style PFC";
  EXPECT_EQ(counter_category("tx_prio3_pause_duration"), CounterCategory::Pause);
  EXPECT_EQ(counter_category("symbol_error"), CounterCategory::Link);
  EXPECT_EQ(counter_category("link_downed"), CounterCategory::Link);
  EXPECT_EQ(counter_category("port_xmit_discards"), CounterCategory::Discard);
  EXPECT_EQ(counter_category("rx_discards_phy"), CounterCategory::Discard);
  EXPECT_EQ(counter_category("port_rcv_data"), CounterCategory::Traffic);
  EXPECT_EQ(counter_category("sent_pkts"), CounterCategory::Traffic);
  EXPECT_EQ(counter_category("lifespan"), CounterCategory::Other) << "unknown names are kept as other";
  EXPECT_EQ(to_string(CounterCategory::Congestion), "congestion");
}

TEST_F(PortCountersTest, ReadsBothFoldersAndKeepsUnknownCounters) {
  mlx5(5, 0);
  put("class/infiniband/mlx5_0/ports/1/hw_counters/not_a_number", "garbage\n");
  const PortCounters pc = read_port_counters(sysfs(), "mlx5_0", 1);
  ASSERT_EQ(pc.counters.size(), 9u) << "the garbage file is left out";
  EXPECT_FALSE(pc.counters.front().hw);
  EXPECT_TRUE(pc.counters.back().hw);
  bool lifespan = false;
  for (const auto& c : pc.counters)
    if (c.name == "lifespan") lifespan = c.hw && c.category == CounterCategory::Other && c.value == 10;
  EXPECT_TRUE(lifespan);
  EXPECT_TRUE(read_port_counters(sysfs(), "mlx5_0", 2).counters.empty()) << "no such port: nothing";
}

TEST_F(PortCountersTest, DeltasByCategoryAndResets) {
  mlx5(5, 100);
  const PortCounters a = read_port_counters(sysfs(), "mlx5_0", 1);
  mlx5(417, 160);
  put("class/infiniband/mlx5_0/ports/1/counters/link_downed", "0\n");  // cleared (perfquery -R)
  const PortCounters b = read_port_counters(sysfs(), "mlx5_0", 1);
  const auto d = counter_deltas(a, b);
  EXPECT_EQ(category_total(d, CounterCategory::Loss), 412u);
  EXPECT_EQ(category_total(d, CounterCategory::Congestion), 60u);
  EXPECT_EQ(category_total(d, CounterCategory::Traffic), 0u) << "unchanged counters give no delta";
  bool reset_seen = false;
  for (const auto& x : d)
    if (x.name == "link_downed") reset_seen = x.reset && x.delta == 0;
  EXPECT_TRUE(reset_seen) << "a counter that went down was reset";
  EXPECT_TRUE(counter_deltas(b, b).empty());
}

}  // namespace
