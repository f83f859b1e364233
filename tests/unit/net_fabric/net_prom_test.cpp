// SPDX-License-Identifier: Apache-2.0
// The verbs engine's Prometheus textfile (RAILSCOPE_NET_PROM, plugin/net/verbs/watch/net_prom.h) as
// the fabric sampler's thread writes it, over a fake sysfs tree (RAILSCOPE_SYSFS_ROOT): a loss counter
// that rises shows in the file's loss series; its healthy twin, where only traffic moves, keeps loss
// at 0; promtool accepts the file; it is removed when the engine finalizes unless kept.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "plugin/net/verbs/setup/discovery.h"
#include "plugin/net/verbs/watch/fabric_watch.h"
#include "plugin/net/verbs/watch/port_health.h"
#include "unit/node/fabric_fixtures.h"

namespace railscope::net::verbs {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing_fixtures::prom_sample;
namespace fs = std::filesystem;

constexpr const char* kPromDev = "mlx5_0";

std::string read_prom_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class NetProm : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.ib_port(kPromDev, "400 Gb/sec (4X NDR)");
    tree_.counter(kPromDev, "port_xmit_data", 0);
    tree_.counter(kPromDev, "packet_seq_err", 0, true);
    ::setenv("RAILSCOPE_SYSFS_ROOT", tree_.root().c_str(), 1);
    dir_ = fs::path(tree_.root()) / "collector";
    fs::create_directories(dir_);
    file_ = dir_ / "net.prom";
    ::setenv("RAILSCOPE_NET_PROM", file_.c_str(), 1);
    ::setenv("SLURM_JOB_ID", "4711", 1);
    ::setenv("RANK", "3", 1);
    NetPort p;
    p.dev_name = kPromDev;
    p.port = 1;
    p.link_layer = node::LinkLayer::InfiniBand;
    p.active_mtu = 4096;
    p.speed_mbps = 400000;
    ports_.push_back(std::move(p));
    health_.push_back(std::make_unique<PortHealth>());
  }
  void TearDown() override {
    watch_.reset();
    for (const char* v :
         {"RAILSCOPE_SYSFS_ROOT", "RAILSCOPE_NET_PROM", "RAILSCOPE_NET_PROM_KEEP", "SLURM_JOB_ID", "RANK"})
      ::unsetenv(v);
  }
  void start() {
    watch_ = std::make_unique<FabricWatch>(ports_, health_);
    health_[0]->attach(IBV_MTU_4096, 20, 7, 4s);
  }
  // Raises the counters a tick at a time until `done` holds on the file (at most 15 s).
  template <typename Done>
  std::string until(uint64_t xmit_words, uint64_t seq_errors, Done done) {
    const auto end = Clock::now() + 15s;
    std::string text;
    while (Clock::now() < end) {
      xmit_ += xmit_words;
      seq_ += seq_errors;
      tree_.counter(kPromDev, "port_xmit_data", xmit_);
      tree_.counter(kPromDev, "packet_seq_err", seq_, true);
      std::this_thread::sleep_for(200ms);
      text = read_prom_file(file_);
      if (!text.empty() && done(text)) break;
    }
    return text;
  }

  testing_fixtures::FabricTree tree_{"net_prom"};
  fs::path dir_;
  fs::path file_;
  uint64_t xmit_ = 0;
  uint64_t seq_ = 0;
  std::vector<NetPort> ports_;
  std::vector<std::unique_ptr<PortHealth>> health_;
  std::unique_ptr<FabricWatch> watch_;
};

const std::string kPort = "device=\"mlx5_0\",port=\"1\",netdev=\"\"";
const std::string kWho = "job=\"4711\",host=\"";

TEST_F(NetProm, RisingLossCounterShowsInTheLossSeriesAndPromtoolAcceptsIt) {
  start();
  // Waits for every series it then checks, so that no assertion depends on the tick at which the file
  // was read.
  const std::string text = until(100, 5, [](const std::string& t) {
    return prom_sample(t, {"railscope_net_port_events_total{", "category=\"loss\""}) >= 20 &&
           prom_sample(t, {"railscope_net_port_transmit_bytes_total{"}) > 0;
  });
  const double loss = prom_sample(text, {"railscope_net_port_events_total{", kPort, "category=\"loss\""});
  EXPECT_GE(loss, 20) << text;
  EXPECT_GT(prom_sample(text, {"railscope_net_port_transmit_bytes_total{", kPort}), 0) << text;
  EXPECT_EQ(prom_sample(text, {"railscope_net_port_up{", kPort}), 1) << text;
  EXPECT_EQ(prom_sample(text, {"railscope_net_port_rate_bytes_per_second{", kPort}), 5e10) << text;
  EXPECT_GE(prom_sample(text, {"railscope_net_port_rail_bytes_total{", kPort}), 0) << text;
  EXPECT_GT(prom_sample(text, {"railscope_net_last_write_timestamp_seconds{", kWho, "rank=\"3\""}), 1.7e9)
      << text;
  EXPECT_EQ(prom_sample(text, {"railscope_net_process_ports_info{", kWho, "rank=\"3\"",
                               "pid=\"" + std::to_string(::getpid()) + "\"", "ports=\"mlx5_0:1\""}),
            1)
      << "the ports this process drives, for the rank alerts' join\n"
      << text;
  EXPECT_EQ(text.find("railscope_port_"), std::string::npos) << "the profiler's names are its own";
  struct stat st {};
  ASSERT_EQ(::stat(file_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  const std::string cmd = "promtool check metrics < '" + file_.string() + "' 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, pipe)) out += buf;
  EXPECT_EQ(::pclose(pipe), 0) << out << text;
  watch_.reset();  // the engine finalizes
  EXPECT_FALSE(fs::exists(file_)) << "removed at finalize";
}

TEST_F(NetProm, HealthyTwinOnlyTrafficMovesAndLossStaysZero) {
  start();
  const std::string text = until(1000, 0, [](const std::string& t) {
    return prom_sample(t, {"railscope_net_port_transmit_bytes_total{"}) >= 40000;
  });
  EXPECT_GE(prom_sample(text, {"railscope_net_port_transmit_bytes_total{", kPort}), 40000) << text;
  for (const char* c : {"loss", "congestion", "pause", "link", "discard"})
    EXPECT_EQ(
        prom_sample(text, {"railscope_net_port_events_total{", kPort, std::string("category=\"") + c + "\""}),
        0)
        << c << "\n"
        << text;
}

TEST_F(NetProm, KeptAfterFinalizeWhenAsked) {
  ::setenv("RAILSCOPE_NET_PROM_KEEP", "1", 1);
  start();
  until(10, 0, [](const std::string&) { return true; });
  watch_.reset();
  EXPECT_TRUE(fs::exists(file_));
}

}  // namespace
}  // namespace railscope::net::verbs
