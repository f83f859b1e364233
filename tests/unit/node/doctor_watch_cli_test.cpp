// SPDX-License-Identifier: Apache-2.0
// `railscope doctor --watch SECONDS --json` as a user runs it, on a ConnectX-7 RoCE fixture whose counters
// this test raises while the command sleeps between its two snapshots.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fabric_fixtures.h"
#include "unit/cli/cli_process.h"

namespace fs = std::filesystem;
using railscope::testing_cli::Child;
using railscope::testing_fixtures::FabricTree;
using railscope::testing_fixtures::prom_sample;

namespace {

// True once the child holds a descriptor on a file under `root` (its samplers are open).
bool holds_file_under(pid_t pid, const std::string& root) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    const auto target = fs::read_symlink(e.path(), ec);
    if (!ec && target.string().starts_with(root)) return true;
  }
  return false;
}

// Runs --watch 2 on the fixture; `change` runs once the command's first snapshot is taken.
template <typename F>
std::pair<int, nlohmann::json> watch(const FabricTree& t, F&& change,
                                     const std::vector<std::string>& extra = {}) {
  const std::string root = fs::canonical(t.root()).string();
  std::vector<std::string> args = {RAILSCOPE_CLI, "doctor", "--watch", "2", "--json", "--sysfs-root", root};
  args.insert(args.end(), extra.begin(), extra.end());
  Child c(args);
  EXPECT_GT(c.pid(), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!holds_file_under(c.pid(), root) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(
      std::chrono::milliseconds(300));  // the first snapshot follows the opens at once
  change();
  const int status = c.wait();
  return {status, nlohmann::json::parse(c.out(), nullptr, false)};
}

TEST(DoctorWatchCli, LossOnOnePortIsShownAndWarned) {
  FabricTree t("watch-cli");
  t.roce_port("mlx5_0", "ens1f0np0", "400 Gb/sec (4X NDR)");
  t.roce_port("mlx5_1", "ens2f0np0", "400 Gb/sec (4X NDR)");
  const auto [rc, j] = watch(t, [&] {
    t.counter("mlx5_1", "out_of_sequence", 380, true);
    t.counter("mlx5_1", "local_ack_timeout_err", 2, true);
    t.ethtool_stats("ens2f0np0", {{"rx_prio3_pause", 9}});
  });
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(j["schema"], "railscope.doctor.watch/1");
  EXPECT_GE(j["interval_s"].get<double>(), 2.0);
  ASSERT_EQ(j["ports"].size(), 2u);
  EXPECT_EQ(j["ports"][0]["totals"]["loss"], 0);
  EXPECT_EQ(j["ports"][1]["totals"]["loss"], 382);
  EXPECT_EQ(j["ports"][1]["totals"]["pause"], 9);
  EXPECT_EQ(j["ports"][1]["ethtool_available"], true);
  std::set<std::string> ids;
  for (const auto& f : j["findings"]) ids.insert(f["id"].get<std::string>());
  // 9 pause frames in 2 s are shown, not judged (node::fabric_findings: 1,000 at least).
  EXPECT_EQ(ids, (std::set<std::string>{"fabric.packet_loss"}));
}

TEST(DoctorWatchCli, QuietPortsExitZero) {
  FabricTree t("watch-cli-quiet");
  t.roce_port("mlx5_0", "ens1f0np0", "400 Gb/sec (4X NDR)");
  const auto [rc, j] = watch(t, [&] { t.counter("mlx5_0", "port_xmit_packets", 1000); });
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(j["findings"].empty());
  EXPECT_EQ(j["ports"][0]["totals"]["traffic"], 1000);
}

// Nothing to watch is what doctor fails: the same finding and exit status, never "ok".
TEST(DoctorWatchCli, NoRdmaDeviceFailsAsDoctorDoes) {
  FabricTree t("watch-cli-none");
  const std::string root = fs::canonical(t.root()).string();
  Child watch({RAILSCOPE_CLI, "doctor", "--watch", "0.1", "--json", "--sysfs-root", root});
  const int watch_rc = watch.wait();
  Child doctor({RAILSCOPE_CLI, "doctor", "--json", "--sysfs-root", root});
  const int doctor_rc = doctor.wait();
  EXPECT_EQ(doctor_rc, 2);
  EXPECT_EQ(watch_rc, doctor_rc);
  const auto j = nlohmann::json::parse(watch.out(), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << watch.out();
  EXPECT_EQ(j["status"], "error");
  ASSERT_EQ(j["findings"].size(), 1u) << j.dump();
  EXPECT_EQ(j["findings"][0]["id"], "device.none");
}

// --prom writes the interval's port series: the lossy port's loss, its healthy sibling's zero, a file
// promtool accepts, readable by the collector's user.
TEST(DoctorWatchCli, PromWritesThePortSeries) {
  FabricTree t("watch-cli-prom");
  t.roce_port("mlx5_0", "ens1f0np0", "400 Gb/sec (4X NDR)");
  t.roce_port("mlx5_1", "ens2f0np0", "400 Gb/sec (4X NDR)");
  const fs::path file = fs::path(t.root()) / "doctor.prom";
  const auto [rc, j] = watch(t,
                             [&] {
                               t.counter("mlx5_1", "out_of_sequence", 380, true);
                               t.counter("mlx5_0", "port_xmit_data", 1000);
                             },
                             {"--prom", file.string()});
  EXPECT_EQ(rc, 1);
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const std::string loss = "category=\"loss\"";
  EXPECT_EQ(prom_sample(text, {"railscope_doctor_port_events_total{", "device=\"mlx5_1\"", loss}), 380)
      << text;
  EXPECT_EQ(prom_sample(text, {"railscope_doctor_port_events_total{", "device=\"mlx5_0\"", loss}), 0) << text;
  EXPECT_EQ(prom_sample(text, {"railscope_doctor_port_transmit_bytes_total{", "device=\"mlx5_0\"",
                               "netdev=\"ens1f0np0\""}),
            4000)
      << text;
  EXPECT_EQ(prom_sample(text, {"railscope_doctor_port_rate_bytes_per_second{", "device=\"mlx5_1\""}), 5e10)
      << text;
  EXPECT_GE(prom_sample(text, {"railscope_doctor_watch_interval_seconds{"}), 2.0) << text;
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  if (std::system("command -v promtool >/dev/null 2>&1") == 0) {
    const std::string cmd = "promtool check metrics < '" + file.string() + "' >/dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << text;
  }
}

// A --prom path that cannot be written fails before the watch runs (73, docs/cli.md), stdout empty; its
// twin, a folder that exists, passes that check.
TEST(DoctorWatchCli, PromThatCannotBeWrittenFailsBeforeWatching) {
  FabricTree t("watch-cli-prom-bad");
  t.roce_port("mlx5_0", "ens1f0np0", "400 Gb/sec (4X NDR)");
  const std::string root = fs::canonical(t.root()).string();
  Child bad({RAILSCOPE_CLI, "doctor", "--watch", "0.1", "--sysfs-root", root, "--prom",
             root + "/no/such/folder/x.prom"});
  EXPECT_EQ(bad.wait(), 73) << bad.err();
  EXPECT_EQ(bad.out(), "");
  EXPECT_NE(bad.err().find("--prom"), std::string::npos) << bad.err();
  Child good({RAILSCOPE_CLI, "doctor", "--watch", "0.1", "--sysfs-root", root, "--prom", root});
  EXPECT_NE(good.wait(), 73) << good.err();
  EXPECT_NE(good.out(), "");
}

TEST(DoctorWatchCli, PromWithoutWatchIsRefused) {
  Child c({RAILSCOPE_CLI, "doctor", "--prom", "x.prom"});
  EXPECT_NE(c.wait(), 0);
  EXPECT_NE(c.err().find("--watch"), std::string::npos) << c.err();
}

}  // namespace
