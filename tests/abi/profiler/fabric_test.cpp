// SPDX-License-Identifier: Apache-2.0
// The profiler's part of fabric health: the node's RDMA ports sampled while the job runs, through the real
// plugin on fake sysfs trees (RAILSCOPE_SYSFS_ROOT). The trees are laid out as the kernel publishes a
// ConnectX-6 RoCE port: ports/1/{state,phys_state,link_layer,rate}, the InfiniBand PortCounters under
// counters/ and the mlx5 provider's hw_counters/ (names from drivers/infiniband/hw/mlx5/counters.c and the
// kernel's Documentation/ABI/stable/sysfs-class-infiniband). The test rewrites counter files between
// reporting windows as the driver would.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "abi/profiler/profile_json.h"

namespace railscope::abi_test {
namespace {

namespace fs = std::filesystem;

class FabricFromSysfs : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("railscope-fabric-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    setenv("RAILSCOPE_SYSFS_ROOT", root_.c_str(), 1);
  }
  void TearDown() override {
    for (const char* v : {"RAILSCOPE_SYSFS_ROOT", "RAILSCOPE_PROFILE_FABRIC_SECONDS",
                          "RAILSCOPE_EXPECTED_BUSBW", "RAILSCOPE_SLOW_COUNT", "NCCL_IB_HCA"})
      unsetenv(v);
    fs::remove_all(root_);
  }
  // Written to a temporary name and renamed, as a reader must never see half a file.
  void put(const std::string& rel, const std::string& content) {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p.string() + ".new") << content;
    fs::rename(p.string() + ".new", p);
  }
  void port(const std::string& dev, const char* state, const char* phys, const char* rate) {
    const std::string p = "class/infiniband/" + dev + "/ports/1/";
    put(p + "state", state);
    put(p + "phys_state", phys);
    put(p + "link_layer", "Ethernet\n");
    put(p + "rate", rate);
    counters(dev, 0, 0, 1000);
  }
  void counters(const std::string& dev, uint64_t out_of_sequence, uint64_t ecn, uint64_t xmit_data) {
    const std::string p = "class/infiniband/" + dev + "/ports/1/";
    put(p + "counters/symbol_error", "0\n");
    put(p + "counters/link_downed", "0\n");
    put(p + "counters/port_xmit_discards", "0\n");
    put(p + "counters/port_xmit_data", std::to_string(xmit_data) + "\n");
    put(p + "hw_counters/out_of_sequence", std::to_string(out_of_sequence) + "\n");
    put(p + "hw_counters/local_ack_timeout_err", "0\n");
    put(p + "hw_counters/np_ecn_marked_roce_packets", std::to_string(ecn) + "\n");
    put(p + "hw_counters/rp_cnp_handled", "0\n");
  }
  fs::path root_;
};

// Runs `n` AllReduce of 32 MiB at n=2 ranks at the given busbw.
void stream(ProfilerDriver& drv, double busbw_gbs, int n, uint64_t& seq) {
  const uint64_t count = 8ull << 20;
  const auto gpu_ns = static_cast<uint64_t>(static_cast<double>(count) * 4.0 / busbw_gbs);
  for (int i = 0; i < n; ++i) {
    CollSpec s;
    s.count = count;
    s.seq = seq++;
    drv.run_coll(s, gpu_ns);
  }
}

// Waits (up to 10 s: a loaded machine) until the monitor has written its first periodic fabric record.
bool wait_for_fabric_record(const std::string& dir) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    for (const std::string& line : read_profile_lines(dir))
      if (line.find("\"type\":\"fabric\"") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::vector<nlohmann::json> diags(const std::vector<nlohmann::json>& all) { return of_type(all, "diag"); }

TEST_F(FabricFromSysfs, RailDownOrSlowerThanItsSiblingsAtStartIsNamed) {
  port("mlx5_0", "4: ACTIVE\n", "5: LinkUp\n", "200 Gb/sec (4X HDR)\n");
  port("mlx5_1", "4: ACTIVE\n", "5: LinkUp\n", "200 Gb/sec (4X HDR)\n");
  port("mlx5_2", "1: DOWN\n", "2: Polling\n", "10 Gb/sec (4X SDR)\n");    // cable pulled
  port("mlx5_3", "4: ACTIVE\n", "5: LinkUp\n", "100 Gb/sec (2X HDR)\n");  // trained at half width
  for (int nnodes : {2, 1}) {
    const std::string dir = fresh_profile_dir("fabric-start");
    ProfilerDriver drv(6);
    ASSERT_TRUE(drv.loaded()) << drv.load_error();
    ASSERT_EQ(drv.init(0xfab, 0, 2, nnodes), ncclSuccess);
    uint64_t seq = 0;
    stream(drv, 150.0, 2, seq);
    ASSERT_EQ(drv.finalize(), ncclSuccess);
    const auto all = parse_profile(dir);
    std::map<std::string, std::string> found;
    for (const auto& d : diags(all)) found[d.at("id")] = d.at("detail");
    if (nnodes == 1) {
      EXPECT_TRUE(found.empty()) << "a single-node communicator uses no rail";
      continue;
    }
    ASSERT_EQ(found.size(), 2u) << all.size();
    EXPECT_NE(found["fabric.rail_down"].find("mlx5_2:1 (Ethernet) is DOWN (physical state Polling)"),
              std::string::npos)
        << found["fabric.rail_down"];
    EXPECT_NE(found["fabric.rail_degraded"].find("mlx5_3:1 runs at 100 Gb/s (100 Gb/sec (2X HDR)) while its "
                                                 "fastest sibling runs at 200 Gb/s"),
              std::string::npos)
        << found["fabric.rail_degraded"];
    // Sampled: the three active ports, not the one that is down.
    const auto fabric = of_type(all, "fabric");
    ASSERT_FALSE(fabric.empty());
    std::vector<std::string> ports;
    for (const auto& p : fabric.back().at("ports")) ports.push_back(p.at("port"));
    EXPECT_EQ(ports, (std::vector<std::string>{"mlx5_0:1", "mlx5_1:1", "mlx5_3:1"}));
  }
  // NCCL_IB_HCA leaves the dead and the slow port out: nothing to name.
  setenv("NCCL_IB_HCA", "=mlx5_0,mlx5_1", 1);
  const std::string dir = fresh_profile_dir("fabric-hca");
  ProfilerDriver drv(6);
  ASSERT_EQ(drv.init(0xfab, 0, 2, 2), ncclSuccess);
  ASSERT_EQ(drv.finalize(), ncclSuccess);
  const auto all = parse_profile(dir);
  EXPECT_TRUE(diags(all).empty());
  ASSERT_FALSE(of_type(all, "fabric").empty());
  EXPECT_EQ(of_type(all, "fabric").back().at("ports").size(), 2u);
}

TEST_F(FabricFromSysfs, ZeroSecondsTurnsSamplingOff) {
  port("mlx5_0", "4: ACTIVE\n", "5: LinkUp\n", "200 Gb/sec (4X HDR)\n");
  port("mlx5_1", "1: DOWN\n", "2: Polling\n", "10 Gb/sec (4X SDR)\n");
  setenv("RAILSCOPE_PROFILE_FABRIC_SECONDS", "0", 1);
  const std::string dir = fresh_profile_dir("fabric-off");
  ProfilerDriver drv(6);
  ASSERT_TRUE(drv.loaded()) << drv.load_error();
  ASSERT_EQ(drv.init(0xfab, 0, 2, 2), ncclSuccess);
  drv.run_coll({}, 1000);
  ASSERT_EQ(drv.finalize(), ncclSuccess);
  const auto all = parse_profile(dir);
  EXPECT_TRUE(of_type(all, "fabric").empty());
  EXPECT_TRUE(diags(all).empty());
  EXPECT_EQ(of_type(all, "coll").size(), 1u);
}

TEST_F(FabricFromSysfs, WindowsCarryTheDeltasAndASlowCollectiveNamesTheLossItCoincidesWith) {
  port("mlx5_0", "4: ACTIVE\n", "5: LinkUp\n", "200 Gb/sec (4X HDR)\n");
  port("mlx5_1", "4: ACTIVE\n", "5: LinkUp\n", "200 Gb/sec (4X HDR)\n");
  setenv("RAILSCOPE_PROFILE_FABRIC_SECONDS", "1", 1);
  setenv("RAILSCOPE_EXPECTED_BUSBW", "100", 1);
  setenv("RAILSCOPE_SLOW_COUNT", "2", 1);
  const std::string dir = fresh_profile_dir("fabric-window");
  ProfilerDriver drv(6);
  ASSERT_TRUE(drv.loaded()) << drv.load_error();
  ASSERT_EQ(drv.init(0xfab, 0, 2, 2), ncclSuccess);
  uint64_t seq = 0;
  stream(drv, 40.0, 2, seq);  // slow on a clean fabric: a finding that names no fabric trouble
  stream(drv, 90.0, 1, seq);  // healthy: the streak ends
  // A healthy window passes (zero deltas), then the fabric starts losing packets and marking ECN on
  // mlx5_1 while data moves.
  ASSERT_TRUE(wait_for_fabric_record(dir)) << "no fabric record after a 1 s window";
  counters("mlx5_1", 400, 50, 91000);
  stream(drv, 40.0, 2, seq);
  ASSERT_EQ(drv.finalize(), ncclSuccess);

  const auto all = parse_profile(dir);
  const auto found = diags(all);
  ASSERT_EQ(found.size(), 2u);
  for (const auto& d : found) EXPECT_EQ(d.at("id"), "coll.slow");
  const std::string clean = found[0].at("detail"), lossy = found[1].at("detail");
  EXPECT_EQ(clean.find("fabric"), std::string::npos) << clean;
  EXPECT_NE(lossy.find("meanwhile the fabric shows: packet loss on mlx5_1:1: 400 (out_of_sequence +400); "
                       "congestion on mlx5_1:1: 50 (np_ecn_marked_roce_packets +50)"),
            std::string::npos)
      << lossy;
  EXPECT_EQ(lossy.find("mlx5_0"), std::string::npos) << "the clean port is not named";

  const auto fabric = of_type(all, "fabric");
  ASSERT_GE(fabric.size(), 2u) << "a record per window, and the last partial one at finalize";
  for (const auto& p : fabric.front().at("ports")) {
    EXPECT_EQ(p.at("state"), "ACTIVE");
    EXPECT_EQ(p.at("speed_gbit"), 200);
    for (const char* c : {"loss", "congestion", "pause", "link", "discard", "traffic", "other"})
      EXPECT_EQ(p.at(c), 0) << c << " in the healthy window";
  }
  uint64_t loss = 0, congestion = 0, traffic = 0;
  for (const auto& w : fabric) {
    EXPECT_LE(w.at("start_unix_ns").get<uint64_t>(), w.at("end_unix_ns").get<uint64_t>());
    for (const auto& p : w.at("ports")) {
      if (p.at("port") != "mlx5_1:1") {
        EXPECT_EQ(p.at("loss"), 0);
        continue;
      }
      loss += p.at("loss").get<uint64_t>();
      congestion += p.at("congestion").get<uint64_t>();
      traffic += p.at("traffic").get<uint64_t>();
      if (p.at("loss") != 0) {
        EXPECT_EQ(p.at("counters").at("out_of_sequence"), 400) << p.dump();
      }
    }
  }
  EXPECT_EQ(loss, 400u);
  EXPECT_EQ(congestion, 50u);
  EXPECT_EQ(traffic, 90000u);
}

}  // namespace
}  // namespace railscope::abi_test
