// SPDX-License-Identifier: Apache-2.0
// Diagnoses while the job runs, through the real plugin: the hang watchdog on a stream that never
// completes, and the slow-collective detector on a synthetic 3-of-4-rails stream vs a healthy one.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "abi/profiler/profile_json.h"

namespace railscope::abi_test {
namespace {

bool wait_for_log(const std::string& needle, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (CapturedLog::contains(needle)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return CapturedLog::contains(needle);
}

TEST(HangWatchdog, NamesOpSeqAndWhatEachPeerWaitsOn) {
  const std::string dir = fresh_profile_dir("hang");
  setenv("RAILSCOPE_HANG_SECONDS", "1", 1);
  CapturedLog::clear();
  ProfilerDriver drv(5);
  ASSERT_TRUE(drv.loaded()) << drv.load_error();
  ASSERT_EQ(drv.init(0x77, 2, 8, 2), ncclSuccess);
  CollSpec s;
  s.seq = 41;
  s.channels = 2;
  void* coll = drv.start_coll(s);
  drv.stop(coll);
  // Channel 0 send to peer 3: data ready, the receiver never sent clear-to-send.
  void* op_send = drv.start_proxy_op(coll, 0, 3, true);
  void* st_send = drv.start_proxy_step(op_send, 0);
  drv.state(st_send, ncclProfilerProxyStepSendGPUWait, 1024);
  drv.state(st_send, ncclProfilerProxyStepSendPeerWait_v4, 1024);
  // Channel 1 send to peer 5: posted, the completion never came.
  void* op_net = drv.start_proxy_op(coll, 1, 5, true);
  void* st_net = drv.start_proxy_step(op_net, 0);
  drv.state(st_net, ncclProfilerProxyStepSendWait, 1024);
  // A collective that does complete must not be reported.
  CollSpec ok;
  ok.func = "AllGather";
  drv.run_coll(ok, 1000);

  EXPECT_TRUE(wait_for_log("coll.hang", std::chrono::milliseconds(4000)));
  std::string line;
  for (const auto& l : CapturedLog::lines())
    if (l.text.find("coll.hang") != std::string::npos) line = l.text;
  EXPECT_NE(line.find("AllReduce seq 41"), std::string::npos) << line;
  EXPECT_NE(line.find("peer 3"), std::string::npos) << line;
  EXPECT_NE(line.find("no clear-to-send from the peer"), std::string::npos) << line;
  EXPECT_NE(line.find("peer 5"), std::string::npos) << line;
  EXPECT_NE(line.find("network path"), std::string::npos) << line;
  EXPECT_EQ(line.find("AllGather"), std::string::npos) << "the completed collective is not named";

  ASSERT_EQ(drv.finalize(), ncclSuccess);
  unsetenv("RAILSCOPE_HANG_SECONDS");
  const auto all = parse_profile(dir);
  int hangs = 0;
  for (const auto& d : of_type(all, "diag")) {
    if (d.at("id") != "coll.hang") continue;
    ++hangs;
    EXPECT_EQ(d.at("op"), "AllReduce");
    EXPECT_EQ(d.at("seq"), 41);
    EXPECT_EQ(d.at("rank"), 2);
    // What a job-level reader matches across ranks before any of them completes it: the communicator's
    // first collective, and what was called.
    EXPECT_EQ(d.value("ord", -1), 0) << d.dump();
    EXPECT_EQ(d.value("count", 0), 1024) << d.dump();
    EXPECT_EQ(d.value("dtype", ""), "ncclFloat32") << d.dump();
    EXPECT_EQ(d.value("bytes", 0), 4096) << d.dump();
    EXPECT_GT(d.value("start_unix_ns", uint64_t{0}), 0u) << d.dump();
    ASSERT_EQ(d.at("waiting").size(), 2u);
    for (const auto& w : d.at("waiting")) {
      if (w.at("peer") == 3) {
        EXPECT_EQ(w.at("state"), "SendPeerWait");
        EXPECT_EQ(w.at("meaning"), "peer_late_or_dead");
      } else {
        EXPECT_EQ(w.at("peer"), 5);
        EXPECT_EQ(w.at("state"), "SendWait");
        EXPECT_EQ(w.at("meaning"), "network_path");
      }
    }
  }
  EXPECT_EQ(hangs, 1) << "reported once";
  // At finalize the stuck collective is written as incomplete; the other one is complete.
  int incomplete = 0;
  for (const auto& c : of_type(all, "coll")) {
    // The ordinal counts every collective of the communicator in the order it was started.
    EXPECT_EQ(c.value("ord", -1), c.at("op") == "AllReduce" ? 0 : 1) << c.dump();
    if (c.at("complete").get<bool>()) continue;
    ++incomplete;
    // The wait still in progress is counted: > 1 s on the peer (peer 3) and on the network (peer 5).
    for (const auto& w : c.at("waits")) {
      const double peer_us = w.at("peer_wait_us"), net_us = w.at("net_us");
      EXPECT_GT(w.at("peer") == 3 ? peer_us : net_us, 1e6) << w.dump();
    }
  }
  EXPECT_EQ(incomplete, 1);
}

// Runs 8 AllReduce of 256 MiB at n = 8 whose GPU time gives the wanted busbw; returns the ids
// of every diagnosis in the profile.
// `from_env`: the ceiling comes from RAILSCOPE_EXPECTED_*; otherwise from the node's RDMA ports
// (the test points RAILSCOPE_SYSFS_ROOT at a fake node). `nnodes` is the communicator's node count.
std::vector<std::string> run_allreduce_stream(double busbw_gbs, const char* proto, bool from_env = true,
                                              int nnodes = 2) {
  const std::string dir = fresh_profile_dir("slow");
  if (from_env) {
    setenv("RAILSCOPE_EXPECTED_BUSBW", "100", 1);
    setenv("RAILSCOPE_EXPECTED_RAILS", "4", 1);
  }
  setenv("RAILSCOPE_SLOW_COUNT", "5", 1);
  ProfilerDriver drv(5);
  EXPECT_TRUE(drv.loaded()) << drv.load_error();
  EXPECT_EQ(drv.init(0x99, 0, 8, nnodes), ncclSuccess);
  const uint64_t count = 64ull << 20;  // floats: 256 MiB
  const double bytes = static_cast<double>(count) * 4.0;
  const double factor = 2.0 * 7.0 / 8.0;
  const auto gpu_ns = static_cast<uint64_t>(bytes * factor / busbw_gbs);  // bytes/ns = GB/s
  for (uint64_t i = 0; i < 8; ++i) {
    CollSpec s;
    s.count = count;
    s.seq = i;
    s.proto = proto;
    drv.run_coll(s, gpu_ns);
  }
  EXPECT_EQ(drv.finalize(), ncclSuccess);
  for (const char* v : {"RAILSCOPE_EXPECTED_BUSBW", "RAILSCOPE_EXPECTED_RAILS", "RAILSCOPE_SLOW_COUNT"})
    unsetenv(v);
  std::vector<std::string> ids;
  for (const auto& d : of_type(parse_profile(dir), "diag")) ids.push_back(d.at("id"));
  return ids;
}

TEST(SlowCollective, ThreeOfFourRailsIsNamed) {
  CapturedLog::clear();
  const auto ids = run_allreduce_stream(75.0, "SIMPLE");
  ASSERT_EQ(ids.size(), 1u) << "one finding per streak of 5 (8 slow ops)";
  EXPECT_EQ(ids[0], "coll.slow.rail_down");
  EXPECT_TRUE(CapturedLog::contains("one of 4 rails down"));
}

// A fake node with four active 200 Gb/s RDMA ports (100 GB/s together) and one port down.
class NodeCeilingFromSysfs : public testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("railscope-ceiling-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    for (int i = 0; i < 5; ++i) {
      const auto port = root_ / ("class/infiniband/mlx5_" + std::to_string(i)) / "ports/1";
      std::filesystem::create_directories(port);
      std::ofstream(port / "state") << (i < 4 ? "4: ACTIVE\n" : "1: DOWN\n");
      std::ofstream(port / "phys_state") << "5: LinkUp\n";
      std::ofstream(port / "link_layer") << "InfiniBand\n";
      std::ofstream(port / "rate") << "200 Gb/sec (4X HDR)\n";
    }
    setenv("RAILSCOPE_SYSFS_ROOT", root_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("RAILSCOPE_SYSFS_ROOT");
    std::filesystem::remove_all(root_);
  }
  std::filesystem::path root_;
};

// The fake node's fifth port is DOWN: that rail is named when the job starts
// (fabric.rail_down, fabric_test.cpp), and a slow collective says it coincides with it.
TEST_F(NodeCeilingFromSysfs, ThreeOfFourRailsIsNamedWithoutConfiguration) {
  CapturedLog::clear();
  const auto ids = run_allreduce_stream(75.0, "SIMPLE", /*from_env=*/false);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0], "fabric.rail_down");
  EXPECT_EQ(ids[1], "coll.slow.rail_down");
  EXPECT_TRUE(
      CapturedLog::contains("expected busbw 100.0 GB/s from 4 ranks of this communicator per node "
                            "(8 on 2 nodes): 4 of the node's 4 selected RDMA ports"));
  EXPECT_TRUE(CapturedLog::contains("meanwhile the fabric shows: mlx5_4:1 (InfiniBand) is DOWN"));
}

TEST_F(NodeCeilingFromSysfs, HealthyStreamStaysQuiet) {
  EXPECT_EQ(run_allreduce_stream(93.0, "SIMPLE", /*from_env=*/false),
            std::vector<std::string>{"fabric.rail_down"})
      << "no slow-collective finding; only the rail that is down";
}

TEST_F(NodeCeilingFromSysfs, SingleNodeCommunicatorIsNotJudgedAgainstTheNics) {
  EXPECT_TRUE(run_allreduce_stream(40.0, "SIMPLE", /*from_env=*/false, /*nnodes=*/1).empty());
}

TEST(SlowCollective, HealthyStreamStaysQuiet) {
  const auto ids = run_allreduce_stream(93.0, "SIMPLE");
  EXPECT_TRUE(ids.empty());
}

// Half the expected busbw or less is not, by itself, evidence of GPUDirect RDMA being off
// (comm_expectation_test.cpp: named only on the net plugin's word).
TEST(SlowCollective, HalfTheExpectedWithoutEvidenceNamesNoCause) {
  CapturedLog::clear();
  const auto ids = run_allreduce_stream(40.0, "SIMPLE");
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids[0], "coll.slow");
  EXPECT_TRUE(CapturedLog::contains("below expected, no cause known to this process"));
}

TEST(SlowCollective, LowLatencyProtocolForLargeMessagesIsNamed) {
  const auto ids = run_allreduce_stream(60.0, "LL128");
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids[0], "coll.slow.protocol");
}

}  // namespace
}  // namespace railscope::abi_test

namespace railscope::abi_test {
namespace {

TEST(Outputs, PrometheusTextfileAndSummaryTableAtFinalize) {
  const std::string dir = fresh_profile_dir("prom");
  const std::string prom_dir = dir + "/textfiles";  // RAILSCOPE_PROFILE_PROM names a folder
  setenv("RAILSCOPE_PROFILE_PROM", prom_dir.c_str(), 1);
  setenv("RAILSCOPE_PROFILE_PROM_KEEP", "1", 1);  // read after finalize
  CapturedLog::clear();
  ProfilerDriver drv(6);
  ASSERT_TRUE(drv.loaded()) << drv.load_error();
  ASSERT_EQ(drv.init(0x1234, 0, 8, 1), ncclSuccess);
  for (uint64_t i = 0; i < 3; ++i) {
    CollSpec s;
    s.seq = i;
    s.count = 1 << 20;
    drv.run_coll(s, 100'000);
  }
  ASSERT_EQ(drv.finalize(), ncclSuccess);
  unsetenv("RAILSCOPE_PROFILE_PROM");
  unsetenv("RAILSCOPE_PROFILE_PROM_KEEP");
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  const std::string prom = prom_dir + "/railscope-" + host + "-" + std::to_string(getpid()) + ".prom";
  std::ifstream in(prom);
  ASSERT_TRUE(in) << "no textfile at " << prom;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  // 4 MiB AllReduce at n=8 in 100 us: busbw = 41.94 × 1.75 = 73.4 GB/s → bucket le=1e11 bytes/s.
  const std::string labels =
      std::string("job=\"\",host=\"") + host +
      "\",rank=\"0\",local_rank=\"\",comm_ranks=\"8\",comm_nodes=\"1\",op=\"AllReduce\","
      "size_class=\"medium\"";
  EXPECT_NE(text.find("railscope_busbw_bytes_per_second_bucket{" + labels + ",le=\"5e+10\"} 0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("railscope_busbw_bytes_per_second_bucket{" + labels + ",le=\"1e+11\"} 3"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("railscope_collective_duration_seconds_count{" + labels + "} 3"), std::string::npos);
  EXPECT_NE(text.find("# TYPE railscope_events_dropped_total counter"), std::string::npos);
  EXPECT_TRUE(CapturedLog::contains("railscope profiler: comm 0x0000000000001234 rank 0/8: 3 collectives"));
  EXPECT_TRUE(CapturedLog::contains("AllReduce")) << "summary table row";
}

}  // namespace
}  // namespace railscope::abi_test
