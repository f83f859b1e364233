// SPDX-License-Identifier: Apache-2.0
// `railscope tuner explain --json` says what the plugin does: for every size it prints, the choice
// equals what the built .so (loaded through the ABI harness, v6) writes into NCCL's table for the
// same topology. Also: the CLI's exit code and message on a bad config.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "cli_run.h"
#include "tuner_driver.h"

namespace railscope::abi_test {
namespace {

const char* const kAlgos[] = {"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
const char* const kProtos[] = {"ll", "ll128", "simple"};

TEST(TunerExplainCli, ChoicesEqualThePluginsForEverySize) {
  for (const char* v : {"RAILSCOPE_TUNER_CONFIG", "NCCL_ALGO", "NCCL_PROTO", "RAILSCOPE_TUNER_NICS",
                        "RAILSCOPE_TUNER_NIC_GBIT"})
    unsetenv(v);
  const std::string config = kFixtures + "/railscope_rules.conf";
  const CliRun r = run_cli(
      "tuner explain --nodes 4 --gpus-per-node 8 --nic-gbps 400 --nics 4 --coll allreduce --json "
      "--config " +
      config);
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  ASSERT_EQ(j["rows"].size(), 32u);  // 8 B ... 16 GiB
  EXPECT_EQ(j["rows"][0]["bytes"], 8);
  EXPECT_EQ(j["rows"][31]["bytes"], 16ull << 30);

  // The plugin, same topology and config (NICs through env, as a job would give them).
  setenv("RAILSCOPE_TUNER_NICS", "4", 1);
  setenv("RAILSCOPE_TUNER_NIC_GBIT", "400", 1);
  setenv("RAILSCOPE_TUNER_CONFIG", config.c_str(), 1);
  TunerDriver plugin(6);
  ASSERT_TRUE(plugin.loaded());
  ASSERT_EQ(plugin.init(32, 4), ncclSuccess);
  int rules = 0;
  for (const auto& row : j["rows"]) {
    CostTable table;
    int channels = 0;
    plugin.coll_info(ncclFuncAllReduce, row["bytes"].get<size_t>(), 1, table, 0, &channels);
    std::string chosen = "none";
    for (int a = 0; a < 7; ++a)
      for (int p = 0; p < 3; ++p)
        if (table.t[a][p] == 0.0f) chosen = std::string(kAlgos[a]) + "/" + kProtos[p];
    ASSERT_FALSE(row["choice"].is_null()) << row.dump();
    const std::string cli =
        row["choice"]["algo"].get<std::string>() + "/" + row["choice"]["proto"].get<std::string>();
    EXPECT_EQ(cli, chosen) << "at " << row["bytes"] << " bytes";
    EXPECT_EQ(row.value("channels", 0), channels) << "at " << row["bytes"] << " bytes";
    rules += row["reason"] == "rule";
  }
  EXPECT_GT(rules, 0);  // the fixture's pins show up in both
  for (const char* v : {"RAILSCOPE_TUNER_CONFIG", "RAILSCOPE_TUNER_NICS", "RAILSCOPE_TUNER_NIC_GBIT"})
    unsetenv(v);
}

TEST(TunerExplainCli, TextTableListsEveryCandidate) {
  const CliRun r =
      run_cli("tuner explain --nodes 2 --gpus-per-node 8 --nic-gbps 200 --nics 8 --coll allgather");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("ring/ll128"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("16G"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("decided by"), std::string::npos) << r.out;
}

// A bad rules file is bad input (EX_DATAERR, 65), not a usage error (64).
TEST(TunerExplainCli, BadConfigIsExit65WithFileLineColumn) {
  const std::string path = ::testing::TempDir() + "/explain_bad.conf";
  std::ofstream(path) << "rule coll=allreduce algo=ring\nrule coll=allreduce bytes=1x algo=tree\n";
  const CliRun r = run_cli("tuner explain --nodes 2 --gpus-per-node 8 --config " + path);
  EXPECT_EQ(r.rc, 65) << r.out;
  EXPECT_NE(r.out.find(path + ":2:27: bytes: '1x' is not a number"), std::string::npos) << r.out;
  const CliRun lax = run_cli("tuner explain --nodes 2 --gpus-per-node 8 --no-strict --config " + path);
  EXPECT_EQ(lax.rc, 0) << lax.out;
}

TEST(TunerExplainCli, UnknownCollectiveIsAUsageError) {
  const CliRun r = run_cli("tuner explain --nodes 2 --gpus-per-node 8 --coll alltoall");
  EXPECT_EQ(r.rc, 64) << r.out;
  EXPECT_NE(r.out.find("unknown collective 'alltoall'"), std::string::npos) << r.out;
}

// The predicted busbw next to each choice (bytes / cost x NCCL's bus factor, as nccl-tests
// defines busbw), and unit names that mean one thing (_gbs bytes, _gbits bits).
TEST(TunerExplainCli, PredictedBusbwNextToTheChoice) {
  const CliRun r = run_cli(
      "tuner explain --nodes 4 --gpus-per-node 8 --nic-gbit 400 --nics 4 --coll allreduce --json "
      "--min-bytes 1K --max-bytes 1G");
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  EXPECT_EQ(j["topology"]["nic_gbits"], 400.0);
  EXPECT_GT(j["topology"]["intra_gbs"].get<double>(), 0);
  EXPECT_FALSE(j["topology"].contains("nic_gbps"));
  ASSERT_EQ(j["rows"].size(), 21u);     // 1K ... 1G
  const double factor = 2.0 * 31 / 32;  // allreduce over 32 ranks
  double previous = 0;
  for (const auto& row : j["rows"]) {
    ASSERT_FALSE(row["choice"].is_null()) << row.dump();
    const double bytes = row["bytes"].get<double>(), cost = row["choice"]["cost_us"].get<double>();
    const double busbw = row["choice"]["busbw_gbs"].get<double>();
    // Both figures are printed to six significant digits (docs/cli.md).
    EXPECT_NEAR(busbw, bytes / cost / 1e3 * factor, 1e-5 * busbw) << row.dump();
    EXPECT_GT(busbw, previous) << "busbw grows with the size here";
    previous = busbw;
  }
  // 4 NICs x 400 Gbit/s = 200 GB/s per node: the model never predicts more at 1G.
  EXPECT_LT(previous, 200.0);
  const CliRun text =
      run_cli("tuner explain --nodes 4 --gpus-per-node 8 --nic-gbit 400 --nics 4 --max-bytes 64");
  ASSERT_EQ(text.rc, 0) << text.out;
  // The text header names the unit as the JSON does (docs/cli.md's units table).
  EXPECT_NE(text.out.find(" busbw_gbs "), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("GBps"), std::string::npos) << text.out;
}

// Profiles of a sweep whose best entry per size is known (fixtures/calibration_2x8: 2 nodes x 8 ranks,
// every Tree/Ring x LL/LL128/Simple entry at 64K, 1M, 16M and 256M) through `tuner calibrate`, then
// `tuner explain --calibration`: at every measured size the choice is the measured best, and a
// communicator of another shape or cluster is refused by name.
TEST(TunerCalibrateCli, CalibratedChoiceIsTheMeasuredBestAtEveryMeasuredSize) {
  const std::string cal = ::testing::TempDir() + "/calibration." + std::to_string(::getpid()) + ".txt";
  const CliRun made = run_cli("tuner calibrate " + std::string(RAILSCOPE_TUNER_FIXTURES) +
                              "/calibration_2x8 -o " + cal + " --gpu H100 --nic-gbit 400 --nics 8");
  ASSERT_EQ(made.rc, 0) << made.out;
  EXPECT_NE(made.out.find("24 points from 240 records"), std::string::npos) << made.out;
  const CliRun r = run_cli(
      "tuner explain --nodes 2 --gpus-per-node 8 --nic-gbit 400 --nics 8 --json "
      "--min-bytes 16K --max-bytes 1G --calibration " +
      cal);
  ASSERT_EQ(r.rc, 0) << r.out;
  // Figures to six significant digits (docs/cli.md), not a float's binary noise (149.85000610351563).
  EXPECT_FALSE(std::regex_search(r.out, std::regex(R"([0-9]\.[0-9]{7,})"))) << r.out;
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  const std::map<uint64_t, std::pair<std::string, std::string>> best = {{64ull << 10, {"tree", "ll"}},
                                                                        {1ull << 20, {"tree", "ll128"}},
                                                                        {16ull << 20, {"ring", "ll128"}},
                                                                        {256ull << 20, {"tree", "simple"}}};
  size_t checked = 0;
  for (const auto& row : j["rows"]) {
    const auto it = best.find(row["bytes"].get<uint64_t>());
    if (it == best.end()) continue;
    ++checked;
    EXPECT_EQ(row["choice"]["algo"], it->second.first) << row.dump();
    EXPECT_EQ(row["choice"]["proto"], it->second.second) << row.dump();
    EXPECT_EQ(row["measured_best"]["algo"], it->second.first) << row.dump();
  }
  EXPECT_EQ(checked, best.size());
  const CliRun shape =
      run_cli("tuner explain --nodes 4 --gpus-per-node 8 --nic-gbit 400 --nics 8 --calibration " + cal);
  EXPECT_EQ(shape.rc, 65) << shape.out;
  EXPECT_NE(shape.out.find("tuner.calibration_other_shape"), std::string::npos) << shape.out;
  const CliRun cluster =
      run_cli("tuner explain --nodes 2 --gpus-per-node 8 --nic-gbit 200 --nics 8 --calibration " + cal);
  EXPECT_EQ(cluster.rc, 65) << cluster.out;
  EXPECT_NE(cluster.out.find("tuner.calibration_other_cluster"), std::string::npos) << cluster.out;
  std::remove(cal.c_str());
}

}  // namespace
}  // namespace railscope::abi_test
