// SPDX-License-Identifier: Apache-2.0
// The tuner plugin through NCCL's ABI, every exported version v2-v6 (loaded with dlopen, one symbol
// at a time): IGNORE entries untouched, model choices, pinned rules only where supported, NCCL_ALGO /
// NCCL_PROTO respected, bad numAlgo/numProto rejected without touching memory, NCCL's example CSV and
// railscope's rules files, every config error reported through init, explain logging, getChunkSize.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tuner_driver.h"
#include "unit/tuner/config_error_cases.h"

namespace railscope::abi_test {
namespace {

// Every test starts from the same environment: 4 × 400 Gb/s NICs, no config, no NCCL filters.
class TunerAbi : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    for (const char* v : {"RAILSCOPE_TUNER_CONFIG", "RAILSCOPE_TUNER_STRICT", "NCCL_ALGO", "NCCL_PROTO",
                          "RAILSCOPE_TUNER_INTRA_GBPS"})
      unsetenv(v);
    setenv("RAILSCOPE_TUNER_NICS", "4", 1);
    setenv("RAILSCOPE_TUNER_NIC_GBIT", "400", 1);
    CapturedLog::clear();
    driver_ = std::make_unique<TunerDriver>(GetParam());
    ASSERT_TRUE(driver_->loaded()) << driver_->plugin().error;
  }
  void TearDown() override {
    driver_.reset();
    for (const char* v : {"RAILSCOPE_TUNER_CONFIG", "RAILSCOPE_TUNER_STRICT", "NCCL_ALGO", "NCCL_PROTO",
                          "RAILSCOPE_TUNER_NICS", "RAILSCOPE_TUNER_NIC_GBIT"})
      unsetenv(v);
  }
  int version() const { return GetParam(); }
  TunerDriver& tuner() { return *driver_; }

  std::string write_config(const std::string& text) {
    const std::string path = ::testing::TempDir() + "/tuner_abi_v" + std::to_string(version()) + ".conf";
    std::ofstream(path) << text;
    return path;
  }

  // The single entry set to 0.0, as (algo, proto); (-1, -1) when none.
  static std::pair<int, int> choice(const CostTable& t) {
    for (int a = 0; a < 7; ++a)
      for (int p = 0; p < 3; ++p)
        if (t.t[a][p] == 0.0f) return {a, p};
    return {-1, -1};
  }

  std::unique_ptr<TunerDriver> driver_;
};

TEST_P(TunerAbi, ExportsTheVersionAndItsName) {
  EXPECT_EQ(tuner().plugin().symbol, "ncclTunerPlugin_v" + std::to_string(version()));
  EXPECT_STREQ(tuner().name(), "railscope");
  if (version() == 6) {
    EXPECT_NE(tuner().v6()->getChunkSize, nullptr);
  }
}

TEST_P(TunerAbi, IgnoreEntriesStayUntouchedAndOneEntryIsChosen) {
  ASSERT_EQ(tuner().init(32, 4), ncclSuccess);
  for (int coll = ncclFuncBroadcast; coll <= ncclFuncAllReduce; ++coll)
    for (size_t bytes = 8; bytes <= (16ull << 30); bytes *= 16) {
      CostTable table;
      table.t[NCCL_ALGO_TREE][NCCL_PROTO_LL128] = RAILSCOPE_NCCL_ALGO_PROTO_IGNORE;  // NCCL disabled one
      const CostTable before = table;
      int channels = 0;
      ASSERT_EQ(tuner().coll_info(static_cast<ncclFunc_t>(coll), bytes, 1, table, 0, &channels), ncclSuccess);
      EXPECT_EQ(channels, 0);
      // v2 returns a choice without seeing the table; NCCL's adapter drops it if it is IGNORE.
      if (version() == 2) {
        EXPECT_LE(table.zeroed_count(), 1) << "coll " << coll << " bytes " << bytes;
      } else {
        EXPECT_EQ(table.zeroed_count(), 1) << "coll " << coll << " bytes " << bytes;
      }
      for (int a = 0; a < 7; ++a)
        for (int p = 0; p < 3; ++p) {
          if (before.t[a][p] == RAILSCOPE_NCCL_ALGO_PROTO_IGNORE) {
            EXPECT_EQ(std::memcmp(&table.t[a][p], &before.t[a][p], sizeof(float)), 0)
                << "IGNORE entry " << a << "/" << p << " changed, coll " << coll << " bytes " << bytes;
          } else if (table.t[a][p] != 0.0f) {
            EXPECT_EQ(table.t[a][p], before.t[a][p]);
          }
        }
    }
}

TEST_P(TunerAbi, ModelPicksTreeLLSmallAndRingSimpleLarge) {
  ASSERT_EQ(tuner().init(32, 4), ncclSuccess);
  CostTable small, large;
  int channels = 0;
  tuner().coll_info(ncclFuncAllReduce, 1024, 1, small, 0, &channels);
  tuner().coll_info(ncclFuncAllReduce, 8ull << 30, 1, large, 0, &channels);
  EXPECT_EQ(choice(small), std::make_pair(int(NCCL_ALGO_TREE), int(NCCL_PROTO_LL)));
  EXPECT_EQ(choice(large), std::make_pair(int(NCCL_ALGO_RING), int(NCCL_PROTO_SIMPLE)));
}

TEST_P(TunerAbi, WithoutNicFactsInitSucceedsAndNcclChoosesMultiNode) {
  unsetenv("RAILSCOPE_TUNER_NICS");
  unsetenv("RAILSCOPE_TUNER_NIC_GBIT");
  ASSERT_EQ(tuner().init(32, 4), ncclSuccess);
  EXPECT_TRUE(CapturedLog::contains("no NIC facts")) << "init should say why it defers";
  CostTable table;
  const CostTable before = table;
  int channels = 0;
  // Unless this node has RDMA NICs lib/node can read, the table is left exactly as NCCL filled it.
  ASSERT_EQ(tuner().coll_info(ncclFuncAllReduce, 1 << 20, 1, table, 0, &channels), ncclSuccess);
  if (CapturedLog::contains("NICs unknown")) {
    EXPECT_EQ(std::memcmp(&table, &before, sizeof table), 0);
  }
  EXPECT_EQ(channels, 0);
}

// A fake sysfs tree: four active 400 Gb/s InfiniBand rails (mlx5_0..3), one rail down, one active
// 25 Gb/s management port, and `gpus` NVIDIA GPUs on the PCI bus.
std::filesystem::path fake_node_sysfs(const std::string& name, int gpus) {
  const std::filesystem::path root = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(root);
  auto put = [&](const std::string& rel, const std::string& text) {
    std::filesystem::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  };
  auto port = [&](const std::string& dev, const char* state, const char* layer, const char* rate) {
    const std::string p = "class/infiniband/" + dev + "/ports/1/";
    put("class/infiniband/" + dev + "/node_guid", "b8a4:02ff:fe11:2233\n");
    put(p + "state", state);
    put(p + "phys_state", "5: LinkUp\n");
    put(p + "link_layer", layer);
    put(p + "rate", rate);
  };
  for (int i = 0; i < 4; ++i)
    port("mlx5_" + std::to_string(i), "4: ACTIVE\n", "InfiniBand\n", "400 Gb/sec (4X NDR)\n");
  port("mlx5_4", "1: DOWN\n", "InfiniBand\n", "400 Gb/sec (4X NDR)\n");
  port("mlx5_5", "4: ACTIVE\n", "Ethernet\n", "25 Gb/sec (1X EDR)\n");
  for (int g = 0; g < gpus; ++g) {
    const std::string dev = "bus/pci/devices/0000:" + std::to_string(10 + g) + ":00.0/";
    put(dev + "vendor", "0x10de\n");
    put(dev + "class", "0x030200\n");
  }
  return root;
}

// NIC facts read from the node by lib/node.
TEST_P(TunerAbi, NicFactsComeFromTheNodeWhenNotGiven) {
  unsetenv("RAILSCOPE_TUNER_NICS");
  unsetenv("RAILSCOPE_TUNER_NIC_GBIT");
  const auto root = fake_node_sysfs("tuner-sysfs-v" + std::to_string(version()), 0);
  setenv("RAILSCOPE_SYSFS_ROOT", root.c_str(), 1);
  const ncclResult_t r = tuner().init(32, 4);
  unsetenv("RAILSCOPE_SYSFS_ROOT");
  ASSERT_EQ(r, ncclSuccess);
  EXPECT_TRUE(CapturedLog::contains("NICs 4 x 400 Gb/s infiniband (node)"));
  CostTable table;
  int channels = 0;
  tuner().coll_info(ncclFuncAllReduce, 8ull << 30, 1, table, 0, &channels);
  EXPECT_EQ(choice(table), std::make_pair(int(NCCL_ALGO_RING), int(NCCL_PROTO_SIMPLE)));
  std::filesystem::remove_all(root);
}

// NCCL_IB_HCA in NCCL's syntax (`^` excludes, `=` matches names exactly) selects the NICs the model
// counts; the GPUs on the node decide how many of them one rank drives.
TEST_P(TunerAbi, NicFactsFollowNcclIbHcaAndTheRanksPerNode) {
  unsetenv("RAILSCOPE_TUNER_NICS");
  unsetenv("RAILSCOPE_TUNER_NIC_GBIT");
  const auto root = fake_node_sysfs("tuner-sysfs-hca-v" + std::to_string(version()), 4);
  setenv("RAILSCOPE_SYSFS_ROOT", root.c_str(), 1);
  setenv("NCCL_IB_HCA", "^=mlx5_1,mlx5_5", 1);
  const ncclResult_t r = tuner().init(4, 4);  // one rank on each of 4 nodes
  unsetenv("NCCL_IB_HCA");
  unsetenv("RAILSCOPE_SYSFS_ROOT");
  ASSERT_EQ(r, ncclSuccess);
  EXPECT_TRUE(
      CapturedLog::contains("NICs 3 x 400 Gb/s infiniband (node, NCCL_IB_HCA=^=mlx5_1,mlx5_5), 1 of 3 "
                            "NICs: 1 rank per node, 4 GPUs per node"));
  std::filesystem::remove_all(root);
}

TEST_P(TunerAbi, PinnedRuleWinsOnlyWhereSupported) {
  setenv("RAILSCOPE_TUNER_CONFIG", (kFixtures + "/railscope_rules.conf").c_str(), 1);
  ASSERT_EQ(tuner().init(32, 4), ncclSuccess);
  // Supported: the pin (Ring/LL128) wins over the model's Tree/LL, with the rule's 6 channels.
  CostTable table;
  int channels = 0;
  tuner().coll_info(ncclFuncAllReduce, 4096, 1, table, 0, &channels);
  EXPECT_EQ(choice(table), std::make_pair(int(NCCL_ALGO_RING), int(NCCL_PROTO_LL128)));
  EXPECT_EQ(channels, 6);
  // Unsupported here: the pin stays IGNORE, the model decides, the rule's channels do not apply.
  CostTable no_ll128;
  no_ll128.t[NCCL_ALGO_RING][NCCL_PROTO_LL128] = RAILSCOPE_NCCL_ALGO_PROTO_IGNORE;
  channels = 0;
  tuner().coll_info(ncclFuncAllReduce, 4096, 1, no_ll128, 0, &channels);
  EXPECT_EQ(no_ll128.t[NCCL_ALGO_RING][NCCL_PROTO_LL128], RAILSCOPE_NCCL_ALGO_PROTO_IGNORE);
  if (version() == 2) {
    // v2 sees no table: its pin reaches NCCL's adapter, which drops it because the entry is IGNORE,
    // and NCCL's own choice stands (the rule's channel count still goes through nChannels).
    EXPECT_EQ(no_ll128.zeroed_count(), 0);
    EXPECT_EQ(channels, 6);
  } else {
    EXPECT_EQ(choice(no_ll128), std::make_pair(int(NCCL_ALGO_TREE), int(NCCL_PROTO_LL)));
    EXPECT_EQ(channels, 0);
  }
}

TEST_P(TunerAbi, MeasuredFigureFromTheRulesFileDecides) {
  setenv("RAILSCOPE_TUNER_CONFIG", (kFixtures + "/railscope_rules.conf").c_str(), 1);
  unsetenv("RAILSCOPE_TUNER_NICS");  // the file's `node` line gives the NICs
  unsetenv("RAILSCOPE_TUNER_NIC_GBIT");
  ASSERT_EQ(tuner().init(32, 4), ncclSuccess);
  CostTable table;
  int channels = 0;
  tuner().coll_info(ncclFuncAllGather, 64ull << 20, 1, table, 0, &channels);
  EXPECT_EQ(choice(table), std::make_pair(int(NCCL_ALGO_RING), int(NCCL_PROTO_LL)));  // measured: very fast
}

TEST_P(TunerAbi, NcclAlgoRestrictionLeavesTheTableAlone) {
  setenv("NCCL_ALGO", "ring", 1);
  setenv("RAILSCOPE_TUNER_CONFIG", (kFixtures + "/railscope_rules.conf").c_str(), 1);
  ASSERT_EQ(tuner().init(32, 4), ncclSuccess);
  CostTable table;
  table.t[NCCL_ALGO_TREE][0] = table.t[NCCL_ALGO_TREE][1] = table.t[NCCL_ALGO_TREE][2] =
      -1.0f;  // as NCCL does
  const CostTable before = table;
  int channels = 0;
  ASSERT_EQ(tuner().coll_info(ncclFuncAllReduce, 4096, 1, table, 0, &channels), ncclSuccess);
  EXPECT_EQ(std::memcmp(&table, &before, sizeof table), 0);
  EXPECT_EQ(channels, 0);  // not even the matching rule's channels
}

TEST_P(TunerAbi, NcclProtoRestrictionOnOneCollectiveOnly) {
  setenv("NCCL_PROTO", "allreduce:^LL", 1);
  ASSERT_EQ(tuner().init(32, 4), ncclSuccess);
  CostTable ar, ag;
  ar.t[NCCL_ALGO_TREE][NCCL_PROTO_LL] = ar.t[NCCL_ALGO_RING][NCCL_PROTO_LL] = -1.0f;
  const CostTable before = ar;
  int channels = 0;
  tuner().coll_info(ncclFuncAllReduce, 4096, 1, ar, 0, &channels);
  EXPECT_EQ(std::memcmp(&ar, &before, sizeof ar), 0);
  tuner().coll_info(ncclFuncAllGather, 4096, 1, ag, 0, &channels);
  EXPECT_EQ(ag.zeroed_count(), 1);
}

TEST_P(TunerAbi, OutOfRangeNumAlgoNumProtoAreRejectedWithoutTouchingMemory) {
  if (version() == 2) GTEST_SKIP() << "v2 passes no table";
  ASSERT_EQ(tuner().init(32, 4), ncclSuccess);
  const struct { int num_algo, num_proto; } bad[] = {{8, 3}, {7, 4}, {0, 3}, {7, 0}, {-1, 3}, {1000, 1000}};
  for (const auto& b : bad) {
    float guard[64];
    for (float& f : guard) f = 7.0f;
    int channels = 12345;
    EXPECT_EQ(tuner().coll_info_raw(ncclFuncAllReduce, 4096, reinterpret_cast<float**>(guard), b.num_algo,
                                    b.num_proto, &channels),
              ncclSuccess);
    for (float f : guard) EXPECT_EQ(f, 7.0f) << b.num_algo << "x" << b.num_proto;
    EXPECT_EQ(channels, 12345);
  }
  int channels = 0;
  EXPECT_EQ(tuner().coll_info_raw(ncclFuncAllReduce, 4096, nullptr, 7, 3, &channels), ncclSuccess);
  float guard[21];
  for (float& f : guard) f = 7.0f;
  EXPECT_EQ(tuner().coll_info_raw(static_cast<ncclFunc_t>(ncclFuncSendRecv), 4096,
                                  reinterpret_cast<float**>(guard), 7, 3, &channels),
            ncclSuccess);
  for (float f : guard) EXPECT_EQ(f, 7.0f);
  EXPECT_TRUE(CapturedLog::contains("outside what this tuner understands"));
}

TEST_P(TunerAbi, NcclExampleCsvFixtureIsParsedAndApplied) {
  setenv("RAILSCOPE_TUNER_CONFIG", (kFixtures + "/nccl_tuner.conf").c_str(), 1);
  ASSERT_EQ(tuner().init(32, 4), ncclSuccess);
  int channels = 0;
  CostTable small;  // 8 fields, exact nNodes/nRanks: Ring/LL128 on 2 channels
  tuner().coll_info(ncclFuncAllReduce, 1000, 1, small, 1, &channels);
  EXPECT_EQ(choice(small), std::make_pair(int(NCCL_ALGO_RING), int(NCCL_PROTO_LL128)));
  EXPECT_EQ(channels, 2);
  CostTable mid;  // wildcards, channels -1: Tree/Simple, NCCL's channel count
  channels = 0;
  tuner().coll_info(ncclFuncAllReduce, 1 << 20, 1, mid, 1, &channels);
  EXPECT_EQ(choice(mid), std::make_pair(int(NCCL_ALGO_TREE), int(NCCL_PROTO_SIMPLE)));
  EXPECT_EQ(channels, 0);
  CostTable bcast3, bcast1;  // 9 fields: only with 3 pipelined ops (the model prefers LL at 1 KiB)
  tuner().coll_info(ncclFuncBroadcast, 1024, 3, bcast3, 1, &channels);
  tuner().coll_info(ncclFuncBroadcast, 1024, 1, bcast1, 1, &channels);
  EXPECT_EQ(choice(bcast3), std::make_pair(int(NCCL_ALGO_RING), int(NCCL_PROTO_SIMPLE)));
  EXPECT_EQ(choice(bcast1), std::make_pair(int(NCCL_ALGO_RING), int(NCCL_PROTO_LL)));
  CostTable rs;  // a pin NCCL does not support: the model decides
  tuner().coll_info(ncclFuncReduceScatter, 1 << 20, 1, rs, 1, &channels);
  EXPECT_EQ(rs.t[NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE], RAILSCOPE_NCCL_ALGO_PROTO_IGNORE);
  EXPECT_EQ(rs.zeroed_count(), 1);
  // 10 fields: regBuff=1 only. v2 and v3 pass no regBuff, so the rule never matches there.
  CostTable ag_reg, ag_plain;
  channels = 0;
  tuner().coll_info(ncclFuncAllGather, 64, 1, ag_reg, 1, &channels);
  const bool has_regbuff = version() >= 4;
  EXPECT_EQ(choice(ag_reg) == std::make_pair(int(NCCL_ALGO_RING), int(NCCL_PROTO_SIMPLE)), has_regbuff);
  EXPECT_EQ(channels, has_regbuff ? 8 : 0);
  channels = 0;
  tuner().coll_info(ncclFuncAllGather, 64, 1, ag_plain, 0, &channels);
  EXPECT_EQ(channels, 0);
}

TEST_P(TunerAbi, EveryConfigErrorFailsInitInStrictModeWithItsMessage) {
  for (const auto& c : railscope::tuner::test::kConfigErrorCases) {
    const std::string path = write_config(c.text);
    setenv("RAILSCOPE_TUNER_CONFIG", path.c_str(), 1);
    CapturedLog::clear();
    TunerDriver strict(version());
    EXPECT_EQ(strict.init(32, 4), ncclInvalidUsage) << c.name;
    EXPECT_EQ(strict.context(), nullptr) << c.name;
    const std::string where = path + ":" + c.where + ": ";
    EXPECT_TRUE(CapturedLog::contains(where)) << c.name << ": no '" << where << "' in the log";
    EXPECT_TRUE(CapturedLog::contains(c.message)) << c.name << ": no '" << c.message << "' in the log";
    EXPECT_TRUE(CapturedLog::contains("[tuner.config]")) << c.name;

    setenv("RAILSCOPE_TUNER_STRICT", "0", 1);
    CapturedLog::clear();
    TunerDriver lax(version());
    EXPECT_EQ(lax.init(32, 4), ncclSuccess) << c.name;
    EXPECT_TRUE(CapturedLog::contains(c.message)) << c.name;
    EXPECT_TRUE(CapturedLog::contains("ignored: RAILSCOPE_TUNER_STRICT=0")) << c.name;
    unsetenv("RAILSCOPE_TUNER_STRICT");
  }
}

TEST_P(TunerAbi, MissingConfigFileFailsOnlyInStrictMode) {
  setenv("RAILSCOPE_TUNER_CONFIG", "/nonexistent/tuner.conf", 1);
  EXPECT_EQ(tuner().init(32, 4), ncclInvalidUsage);
  EXPECT_TRUE(CapturedLog::contains("/nonexistent/tuner.conf:0:0: cannot open the tuner config file"));
  setenv("RAILSCOPE_TUNER_STRICT", "0", 1);
  TunerDriver lax(version());
  EXPECT_EQ(lax.init(32, 4), ncclSuccess);
}

// RAILSCOPE_TUNER_CONFIG=/dev/zero read forever, hanging communicator creation.
TEST_P(TunerAbi, DeviceAsConfigFileIsRefusedAtOnce) {
  setenv("RAILSCOPE_TUNER_CONFIG", "/dev/zero", 1);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(tuner().init(32, 4), ncclInvalidUsage);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_TRUE(CapturedLog::contains("/dev/zero:0:0: the tuner config is not a regular file"));
  setenv("RAILSCOPE_TUNER_STRICT", "0", 1);
  TunerDriver lax(version());
  EXPECT_EQ(lax.init(32, 4), ncclSuccess);
  unsetenv("RAILSCOPE_TUNER_STRICT");
}

TEST_P(TunerAbi, EachDecisionIsLoggedOncePerCollectiveAndSizeBucket) {
  ASSERT_EQ(tuner().init(32, 4), ncclSuccess);
  auto decisions = [] {
    int n = 0;
    for (const auto& l : CapturedLog::lines())
      if ((l.flags & NCCL_TUNING) && l.text.find("chose") != std::string::npos) ++n;
    return n;
  };
  int channels = 0;
  for (size_t bytes : {4096, 4100, 8000}) {  // one bucket (2^12..2^13-1)
    CostTable t;
    tuner().coll_info(ncclFuncAllReduce, bytes, 1, t, 0, &channels);
  }
  EXPECT_EQ(decisions(), 1);
  CostTable other;
  tuner().coll_info(ncclFuncAllReduce, 1 << 20, 1, other, 0, &channels);
  CostTable other_coll;
  tuner().coll_info(ncclFuncAllGather, 4096, 1, other_coll, 0, &channels);
  EXPECT_EQ(decisions(), 3);
  EXPECT_TRUE(CapturedLog::contains("runner-up"));
  EXPECT_TRUE(CapturedLog::contains("decided by latency term"));
}

TEST_P(TunerAbi, NcclConstantsFromInitFeedTheModel) {
  if (version() < 5) GTEST_SKIP() << "constants arrive with v5";
  ncclTunerConstants_v5_t constants{};
  // Everything free except the network for the tree: small AllReduce moves to Ring.
  for (int h = 0; h < 3; ++h)
    for (int a = 0; a < 7; ++a)
      for (int p = 0; p < 3; ++p) constants.hwLatencies[h][a][p] = 1.0;
  for (int p = 0; p < 3; ++p) constants.hwLatencies[NCCL_HW_NET][NCCL_ALGO_TREE][p] = 10000.0;
  const ncclTunerConstants_v5_t copy = constants;
  ncclNvlDomainInfo_v5_t nvl{4, 8, 8};
  ASSERT_EQ(tuner().init(32, 4, &nvl, &constants), ncclSuccess);
  EXPECT_EQ(std::memcmp(&copy, &constants, sizeof constants), 0) << "constants are NCCL's; left as given";
  CostTable t;
  int channels = 0;
  tuner().coll_info(ncclFuncAllReduce, 1024, 1, t, 0, &channels);
  EXPECT_EQ(choice(t).first, NCCL_ALGO_RING);
}

TEST_P(TunerAbi, MultiNodeNvlinkDomainNeedsNoNics) {
  if (version() < 5) GTEST_SKIP() << "NVLink domains arrive with v5";
  unsetenv("RAILSCOPE_TUNER_NICS");
  unsetenv("RAILSCOPE_TUNER_NIC_GBIT");
  ncclNvlDomainInfo_v5_t nvl{1, 32, 32};  // 4 nodes, one NVLink domain
  ASSERT_EQ(tuner().init(32, 4, &nvl, nullptr), ncclSuccess);
  CostTable t;
  int channels = 0;
  tuner().coll_info(ncclFuncAllReduce, 1 << 20, 1, t, 0, &channels);
  EXPECT_EQ(t.zeroed_count(), 1);
}

TEST_P(TunerAbi, ChunkSizeOnlyWhereARuleSaysSoAndNullSafe) {
  if (version() != 6) GTEST_SKIP() << "getChunkSize is v6";
  setenv("RAILSCOPE_TUNER_CONFIG", (kFixtures + "/railscope_rules.conf").c_str(), 1);
  ASSERT_EQ(tuner().init(32, 4), ncclSuccess);
  auto* t = tuner().v6();
  size_t chunk = 4096;
  EXPECT_EQ(t->getChunkSize(tuner().context(), ncclFuncAllReduce, 2ull << 30, NCCL_ALGO_RING,
                            NCCL_PROTO_SIMPLE, 16, &chunk),
            ncclSuccess);
  EXPECT_EQ(chunk, 1u << 20);
  chunk = 4096;
  EXPECT_EQ(t->getChunkSize(tuner().context(), ncclFuncAllReduce, 4096, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 16,
                            &chunk),
            ncclSuccess);
  EXPECT_EQ(chunk, 4096u);
  EXPECT_EQ(t->getChunkSize(tuner().context(), ncclFuncAllReduce, 2ull << 30, 1, 2, 16, nullptr),
            ncclSuccess);
  EXPECT_EQ(t->getChunkSize(nullptr, ncclFuncAllReduce, 2ull << 30, 1, 2, 16, &chunk), ncclSuccess);
}

TEST_P(TunerAbi, NullContextsAreHarmless) {
  CostTable t;
  const CostTable before = t;
  int channels = 0;
  if (version() >= 3) {
    EXPECT_EQ(tuner().coll_info_raw(ncclFuncAllReduce, 4096, t.as_nccl_passes_it(), 7, 3, &channels),
              ncclSuccess);
    EXPECT_EQ(std::memcmp(&t, &before, sizeof t), 0);
  }
  EXPECT_EQ(tuner().finalize(), ncclSuccess);  // finalize(NULL)
}

// RAILSCOPE_TUNER_NIC_GBPS was the NICs' rate in Gbit/s before GBPS came to mean bytes (docs/cli.md): a
// job that still sets it keeps its model, and is told the new name.
TEST(TunerAbiEnv, TheOldNicRateNameIsReadAsGbitWithANote) {
  unsetenv("RAILSCOPE_TUNER_NIC_GBIT");
  setenv("RAILSCOPE_TUNER_NICS", "4", 1);
  setenv("RAILSCOPE_TUNER_NIC_GBPS", "400", 1);
  TunerDriver t(5);
  CapturedLog::clear();
  ASSERT_EQ(t.init(32, 4), ncclSuccess);
  EXPECT_TRUE(CapturedLog::contains("NICs 4 x 400 Gb/s")) << "the old name must still set the rate";
  EXPECT_TRUE(CapturedLog::contains("its name is now RAILSCOPE_TUNER_NIC_GBIT"));
  t.finalize();
  // The new name wins and brings no note.
  setenv("RAILSCOPE_TUNER_NIC_GBIT", "200", 1);
  TunerDriver t2(5);
  CapturedLog::clear();
  ASSERT_EQ(t2.init(32, 4), ncclSuccess);
  EXPECT_TRUE(CapturedLog::contains("NICs 4 x 200 Gb/s"));
  EXPECT_FALSE(CapturedLog::contains("its name is now"));
  t2.finalize();
  for (const char* v : {"RAILSCOPE_TUNER_NICS", "RAILSCOPE_TUNER_NIC_GBPS", "RAILSCOPE_TUNER_NIC_GBIT"})
    unsetenv(v);
}

TEST(TunerAbiV2, ReturnsAChoiceAndNothingWithoutAModel) {
  setenv("RAILSCOPE_TUNER_NICS", "4", 1);
  setenv("RAILSCOPE_TUNER_NIC_GBIT", "400", 1);
  TunerDriver v2(2);
  ASSERT_EQ(v2.init(32, 4), ncclSuccess);
  int algo = -1, proto = -1, channels = 0;
  ASSERT_EQ(v2.choose(ncclFuncAllReduce, 1024, 0, 0, 1, &algo, &proto, &channels), ncclSuccess);
  EXPECT_EQ(algo, NCCL_ALGO_TREE);
  EXPECT_EQ(proto, NCCL_PROTO_LL);
  EXPECT_EQ(channels, 0);
  EXPECT_EQ(v2.choose(ncclFuncAllReduce, 1024, 0, 0, 1, nullptr, nullptr, &channels), ncclSuccess);
  v2.finalize();
  unsetenv("RAILSCOPE_TUNER_NICS");
  unsetenv("RAILSCOPE_TUNER_NIC_GBIT");
  TunerDriver bare(2);
  CapturedLog::clear();
  ASSERT_EQ(bare.init(32, 4), ncclSuccess);
  algo = proto = -1;
  bare.choose(ncclFuncAllReduce, 1024, 0, 0, 1, &algo, &proto, &channels);
  if (CapturedLog::contains("NICs unknown")) {
    EXPECT_EQ(algo, -1);
    EXPECT_EQ(proto, -1);
  }
}

INSTANTIATE_TEST_SUITE_P(Versions, TunerAbi, ::testing::Values(2, 3, 4, 5, 6),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return "v" + std::to_string(i.param);
                         });

}  // namespace
}  // namespace railscope::abi_test
