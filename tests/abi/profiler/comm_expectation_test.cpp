// SPDX-License-Identifier: Apache-2.0
// The expected busbw of each communicator from its shape (nRanks, nNodes) and the ports its ranks
// drive, through the real plugin on fake nodes (RAILSCOPE_SYSFS_ROOT): for every shape a healthy stream
// that must stay silent and a slow one that must be named, and "GPUDirect off" only when railscope's
// net plugin says the traffic is staged through host memory.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "abi/profiler/profile_json.h"
#include "railscope/nccl/net_descriptors.h"

namespace railscope::abi_test {
namespace {

// A node with `ports` active InfiniBand ports (mlx5_0…) of `gbps` Gb/s each and `gpus` NVIDIA GPUs on
// its PCI bus, laid out as the kernel publishes them.
class FakeNode {
 public:
  FakeNode(int ports, int gbps, int gpus) {
    root_ = std::filesystem::temp_directory_path() / ("railscope-commexp-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    for (int i = 0; i < ports; ++i) {
      const auto port = root_ / ("class/infiniband/mlx5_" + std::to_string(i)) / "ports/1";
      std::filesystem::create_directories(port);
      std::ofstream(port / "state") << "4: ACTIVE\n";
      std::ofstream(port / "phys_state") << "5: LinkUp\n";
      std::ofstream(port / "link_layer") << "InfiniBand\n";
      std::ofstream(port / "rate") << gbps << " Gb/sec (4X NDR)\n";
    }
    for (int i = 0; i < gpus; ++i) {
      char bdf[32];
      std::snprintf(bdf, sizeof bdf, "0000:%02x:00.0", 0x18 + 0x10 * i);
      const auto dev = root_ / "bus/pci/devices" / bdf;
      std::filesystem::create_directories(dev);
      std::ofstream(dev / "vendor") << "0x10de\n";
      std::ofstream(dev / "class") << "0x030200\n";
    }
    // An NVSwitch (a bridge of NVIDIA's) is not a GPU.
    const auto sw = root_ / "bus/pci/devices/0000:05:00.0";
    std::filesystem::create_directories(sw);
    std::ofstream(sw / "vendor") << "0x10de\n";
    std::ofstream(sw / "class") << "0x068000\n";
    setenv("RAILSCOPE_SYSFS_ROOT", root_.c_str(), 1);
  }
  ~FakeNode() {
    unsetenv("RAILSCOPE_SYSFS_ROOT");
    std::filesystem::remove_all(root_);
  }
  FakeNode(const FakeNode&) = delete;
  FakeNode& operator=(const FakeNode&) = delete;

 private:
  std::filesystem::path root_;
};

nccl::RailscopeNetPort_v1 net_port(const char* device, int gbps, const char* staged_reason = nullptr) {
  nccl::RailscopeNetPort_v1 p{};
  p.type = nccl::kRailscopeNetPort;
  p.hostStaged = staged_reason != nullptr ? 1 : 0;
  p.port = 1;
  p.speedMbps = gbps * 1000;
  std::snprintf(p.device, sizeof p.device, "%s", device);
  p.reason = staged_reason;
  return p;
}

struct Findings {
  std::vector<std::string> ids;
  std::vector<std::string> details;
};

// 8 AllReduce of 256 MiB whose GPU time gives `busbw_gbs` on a communicator of nranks on nnodes
// (rank 0 of it in this process); `ports` are announced by the "net plugin" under the first
// collective's proxy step, as railscope's net plugin does on a connection's first transfer.
Findings run_stream(int nranks, int nnodes, double busbw_gbs,
                    const std::vector<nccl::RailscopeNetPort_v1>& ports = {}) {
  const std::string dir = fresh_profile_dir("commexp");
  setenv("RAILSCOPE_SLOW_COUNT", "5", 1);
  ProfilerDriver drv(6);
  EXPECT_TRUE(drv.loaded()) << drv.load_error();
  EXPECT_EQ(drv.init(0xc0ffee, 0, nranks, nnodes), ncclSuccess);
  if (!ports.empty()) {
    CollSpec warm;  // small: not judged
    void* coll = drv.start_coll(warm);
    drv.stop(coll);
    void* op = drv.start_proxy_op(coll, 0, 1, true);
    void* step = drv.start_proxy_step(op, 0);
    for (nccl::RailscopeNetPort_v1 p : ports) {
      void* ev = drv.start_net(step, nccl::kNetRailscopePluginId, &p);
      EXPECT_EQ(ev, nullptr) << "a port event has nothing to stop";
    }
    drv.stop(step);
    drv.stop(op);
  }
  const uint64_t count = 64ull << 20;  // floats: 256 MiB
  const double factor = 2.0 * (nranks - 1) / nranks;
  const auto gpu_ns = static_cast<uint64_t>(static_cast<double>(count) * 4.0 * factor / busbw_gbs);
  for (uint64_t i = 0; i < 8; ++i) {
    CollSpec s;
    s.count = count;
    s.seq = i + 1;
    drv.run_coll(s, gpu_ns);
  }
  EXPECT_EQ(drv.finalize(), ncclSuccess);
  unsetenv("RAILSCOPE_SLOW_COUNT");
  Findings out;
  for (const auto& d : of_type(parse_profile(dir), "diag")) {
    out.ids.push_back(d.at("id"));
    out.details.push_back(d.at("detail"));
  }
  return out;
}

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// The scenario that raised a false "GPUDirect off": data parallel over 2 nodes, one GPU (one NIC's
// traffic) per node, on nodes with 8 × 400 Gb/s ports.
TEST(CommExpectation, TwoRanksOnTwoNodesIsJudgedAgainstOnePort) {
  FakeNode node(8, 400, 8);
  CapturedLog::clear();
  EXPECT_TRUE(run_stream(2, 2, 48.0).ids.empty()) << "48 GB/s is healthy for one 400 Gb/s port";
  EXPECT_TRUE(CapturedLog::contains("expected busbw 50.0 GB/s from 1 rank of this communicator per node"));
  const Findings slow = run_stream(2, 2, 20.0);
  ASSERT_EQ(slow.ids, std::vector<std::string>{"coll.slow"}) << "no cause without evidence";
  EXPECT_TRUE(has(slow.details[0], "is 40% of the expected 50.0 GB/s")) << slow.details[0];
  EXPECT_TRUE(has(slow.details[0],
                  "below expected, no cause known to this process; check in order: "
                  "GPUDirect RDMA"))
      << slow.details[0];
  EXPECT_FALSE(has(slow.details[0], "host memory")) << slow.details[0];
}

TEST(CommExpectation, OneRankPerNodeIsJudgedAgainstOnePort) {
  FakeNode node(8, 400, 8);
  EXPECT_TRUE(run_stream(4, 4, 46.0).ids.empty());
  EXPECT_EQ(run_stream(4, 4, 30.0).ids, std::vector<std::string>{"coll.slow"});
}

TEST(CommExpectation, SixteenRanksOnTwoNodesUseEveryPort) {
  FakeNode node(8, 400, 8);
  CapturedLog::clear();
  EXPECT_TRUE(run_stream(16, 2, 370.0).ids.empty());
  EXPECT_TRUE(CapturedLog::contains("expected busbw 400.0 GB/s from 8 ranks of this communicator per node"));
  const Findings slow = run_stream(16, 2, 200.0);
  ASSERT_EQ(slow.ids, std::vector<std::string>{"coll.slow"}) << "half the expected is not \"GPUDirect off\"";
  EXPECT_TRUE(has(slow.details[0], "is 50% of the expected 400.0 GB/s")) << slow.details[0];
}

// 8 GPUs sharing 4 ports: a communicator with all 8 GPUs of the node drives the 4 ports; one with 2
// GPUs of it may sit on one shared port, so one port is all it can be held to.
TEST(CommExpectation, OnePortPerTwoGpus) {
  FakeNode node(4, 400, 8);
  CapturedLog::clear();
  EXPECT_TRUE(run_stream(16, 2, 190.0).ids.empty());
  EXPECT_TRUE(
      CapturedLog::contains("expected busbw 200.0 GB/s from 8 ranks of this communicator per node "
                            "(16 on 2 nodes), 8 GPUs on 4 ports"));
  EXPECT_EQ(run_stream(16, 2, 120.0).ids, std::vector<std::string>{"coll.slow"});
  EXPECT_TRUE(run_stream(4, 2, 48.0).ids.empty()) << "2 ranks per node, possibly on one shared port";
  EXPECT_EQ(run_stream(4, 2, 30.0).ids, std::vector<std::string>{"coll.slow"});
}

// Inside one node NCCL uses NVLink/PCIe: no NIC expectation; only RAILSCOPE_EXPECTED_BUSBW judges.
TEST(CommExpectation, EightRanksInOneNodeAreJudgedOnlyAgainstTheOverride) {
  FakeNode node(8, 400, 8);
  CapturedLog::clear();
  EXPECT_TRUE(run_stream(8, 1, 20.0).ids.empty()) << "no NIC figure applies inside a node";
  EXPECT_TRUE(
      CapturedLog::contains("no expected busbw, so no slow-collective diagnosis: it lives on one node"));
  setenv("RAILSCOPE_EXPECTED_BUSBW", "300", 1);
  const bool healthy_quiet = run_stream(8, 1, 280.0).ids.empty();
  const Findings slow = run_stream(8, 1, 150.0);
  unsetenv("RAILSCOPE_EXPECTED_BUSBW");
  EXPECT_TRUE(healthy_quiet);
  ASSERT_EQ(slow.ids, std::vector<std::string>{"coll.slow"});
  EXPECT_TRUE(has(slow.details[0], "is 50% of the expected 300.0 GB/s (RAILSCOPE_EXPECTED_BUSBW)"))
      << slow.details[0];
}

// The ports the net plugin names are the best evidence: a rank on two ports is held to both.
TEST(CommExpectation, PortsTheNetPluginNamesRaiseTheExpectation) {
  FakeNode node(8, 400, 8);
  EXPECT_TRUE(run_stream(2, 2, 60.0).ids.empty()) << "above one port's worth";
  CapturedLog::clear();
  const Findings slow = run_stream(2, 2, 60.0, {net_port("mlx5_0", 400), net_port("mlx5_1", 400)});
  ASSERT_EQ(slow.ids, std::vector<std::string>{"coll.slow"});
  EXPECT_TRUE(has(slow.details[0], "is 60% of the expected 100.0 GB/s")) << slow.details[0];
  EXPECT_TRUE(has(slow.details[0], "this rank's connections on mlx5_0:1,mlx5_1:1 (net plugin): 2 ports"))
      << slow.details[0];
  EXPECT_TRUE(run_stream(2, 2, 95.0, {net_port("mlx5_0", 400), net_port("mlx5_1", 400)}).ids.empty());
}

// "GPUDirect off" is named only when the net plugin says it stages the traffic through host memory.
TEST(CommExpectation, GpuDirectOffOnlyWithTheNetPluginsWord) {
  FakeNode node(8, 400, 8);
  const Findings staged = run_stream(2, 2, 20.0, {net_port("mlx5_0", 400, "gdr.no_peermem")});
  ASSERT_EQ(staged.ids, std::vector<std::string>{"coll.slow.gdr_off"});
  EXPECT_TRUE(
      has(staged.details[0],
          "likely: the net plugin stages the traffic of mlx5_0:1 through host memory (gdr.no_peermem)"))
      << staged.details[0];
  EXPECT_EQ(run_stream(2, 2, 20.0, {net_port("mlx5_0", 400)}).ids, std::vector<std::string>{"coll.slow"});
  EXPECT_TRUE(run_stream(2, 2, 48.0, {net_port("mlx5_0", 400, "gdr.no_peermem")}).ids.empty())
      << "host staging at a healthy busbw is not a slow collective";
}

}  // namespace
}  // namespace railscope::abi_test
