// SPDX-License-Identifier: Apache-2.0
// FabricWatch, the verbs engine's fabric sampler, over a fake sysfs tree (RAILSCOPE_SYSFS_ROOT): a
// port that came back from an outage is said to have recovered ([link.recovered]) even when the
// traffic that shows it is the last before the port's connections close or the engine finalizes,
// between two of the sampler's one-second ticks; a link still down then, or a healthy port, is not.
// The test bed's link_flap case reaches these paths only when its timing happens to fall that way.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "plugin/net/verbs/setup/discovery.h"
#include "plugin/net/verbs/watch/fabric_watch.h"
#include "plugin/net/verbs/watch/port_health.h"
#include "railscope/core/log.h"
#include "unit/node/fabric_fixtures.h"

namespace railscope::net::verbs {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Every WARN line the plugin code logs while a test runs.
struct Warnings {
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::vector<std::string>& lines() {
    static std::vector<std::string> l;
    return l;
  }
  static void sink(log::Level level, std::string_view message) {
    if (level != log::Level::Warn) return;
    std::lock_guard lock(mutex());
    lines().emplace_back(message);
  }
  static std::vector<std::string> with(std::string_view id) {
    std::lock_guard lock(mutex());
    std::vector<std::string> out;
    for (const auto& l : lines())
      if (l.find(id) != std::string::npos) out.push_back(l);
    return out;
  }
  static std::vector<std::string> all() {
    std::lock_guard lock(mutex());
    return lines();
  }
};

constexpr const char* kDev = "mlx5_0";

class FabricWatchRecovery : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.ib_port(kDev, "400 Gb/sec (4X NDR)");
    ::setenv("RAILSCOPE_SYSFS_ROOT", tree_.root().c_str(), 1);
    {
      std::lock_guard lock(Warnings::mutex());
      Warnings::lines().clear();
    }
    log::set_extra_sink(&Warnings::sink);
    NetPort p;
    p.dev_name = kDev;
    p.port = 1;
    p.link_layer = node::LinkLayer::InfiniBand;
    p.active_mtu = 4096;
    ports_.push_back(std::move(p));
    health_.push_back(std::make_unique<PortHealth>());
    watch_ = std::make_unique<FabricWatch>(ports_, health_);
  }
  void TearDown() override {
    watch_.reset();
    log::set_extra_sink(nullptr);
    ::unsetenv("RAILSCOPE_SYSFS_ROOT");
  }

  PortHealth& health() { return *health_[0]; }
  void count(const char* counter, uint64_t add) {
    uint64_t& v = counters_[counter];
    v += add;
    tree_.counter(kDev, counter, v);
  }
  // A connection attaches, and the sampler has read the port at least twice (a baseline, then a
  // tick that saw the packets sent meanwhile): what follows is judged against a baseline.
  void attach_and_wait_for_sampling() {
    health().attach(IBV_MTU_4096, 20, 7, 4s);
    const auto traffic = static_cast<size_t>(node::CounterCategory::Traffic);
    const auto end = Clock::now() + 20s;
    while (health().totals()[traffic] == 0 && Clock::now() < end) {
      count("port_xmit_packets", 10);
      std::this_thread::sleep_for(100ms);
    }
    ASSERT_GT(health().totals()[traffic], 0u) << "the sampler never read the port";
  }
  // The link went down 3 s ago and came back now, as the async-event thread records it.
  void outage_just_ended() {
    const auto now = Clock::now();
    health().link_down(now - 3s);
    health().link_up(now);
  }
  // Waits (at most `bound`) for a line with `id`.
  static std::vector<std::string> wait_for(std::string_view id, std::chrono::milliseconds bound) {
    const auto end = Clock::now() + bound;
    while (Warnings::with(id).empty() && Clock::now() < end) std::this_thread::sleep_for(20ms);
    return Warnings::with(id);
  }

  testing_fixtures::FabricTree tree_{"fabric_watch"};
  std::map<std::string, uint64_t> counters_;
  std::vector<NetPort> ports_;
  std::vector<std::unique_ptr<PortHealth>> health_;
  std::unique_ptr<FabricWatch> watch_;
};

TEST_F(FabricWatchRecovery, TrafficJustBeforeTheLastConnectionClosesIsARecovery) {
  attach_and_wait_for_sampling();
  outage_just_ended();
  count("port_rcv_packets", 1234);  // the job's last messages, then the connection closes
  health().detach();
  const auto lines = wait_for("[link.recovered]", 5s);
  ASSERT_EQ(lines.size(), 1u) << "no [link.recovered] after the last connection closed";
  EXPECT_NE(lines[0].find(std::string(kDev) + ":1 after 3.0 s"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("1234 packets"), std::string::npos) << lines[0];
  watch_.reset();  // finalize says it no second time
  EXPECT_EQ(Warnings::with("[link.recovered]").size(), 1u);
}

TEST_F(FabricWatchRecovery, TrafficJustBeforeFinalizeIsARecovery) {
  attach_and_wait_for_sampling();
  outage_just_ended();
  count("port_rcv_packets", 77);
  watch_.reset();  // the engine finalizes with the connection still open
  const auto lines = Warnings::with("[link.recovered]");
  ASSERT_EQ(lines.size(), 1u) << "no [link.recovered] at finalize";
  EXPECT_NE(lines[0].find("77 packets"), std::string::npos) << lines[0];
}

TEST_F(FabricWatchRecovery, ALinkStillDownAtCloseIsNotARecovery) {
  attach_and_wait_for_sampling();
  health().link_down(Clock::now());
  count("port_rcv_packets", 50);  // counted before the outage; the link is down now
  health().detach();
  std::this_thread::sleep_for(1500ms);  // the tick after the close has looked
  watch_.reset();
  EXPECT_TRUE(Warnings::with("[link.recovered]").empty());
}

TEST_F(FabricWatchRecovery, ABackLinkWithNoTrafficBeforeCloseIsNotYetARecovery) {
  attach_and_wait_for_sampling();
  outage_just_ended();
  health().detach();  // nothing received since the last tick: ACTIVE alone is no proof here
  std::this_thread::sleep_for(1500ms);
  watch_.reset();
  EXPECT_TRUE(Warnings::with("[link.recovered]").empty());
}

TEST_F(FabricWatchRecovery, AHealthyPortSaysNothing) {
  attach_and_wait_for_sampling();
  count("port_rcv_packets", 5000);
  health().detach();
  std::this_thread::sleep_for(1500ms);
  watch_.reset();
  EXPECT_TRUE(Warnings::all().empty()) << Warnings::all().front();
}

// The running plugin names a used port that retrains to a lower rate (the fake sysfs tree is the port
// attribute source: its rate file is what the kernel's rate_show() writes from ibv_query_port's
// active_speed and active_width); an unchanged port says nothing.
TEST_F(FabricWatchRecovery, APortThatRetrainsLowerMidJobIsDegraded) {
  attach_and_wait_for_sampling();
  std::this_thread::sleep_for(1500ms);  // a tick at the first rate
  EXPECT_TRUE(Warnings::with("[link.degraded]").empty()) << "an unchanged port was named";
  tree_.put(std::string("class/infiniband/") + kDev + "/ports/1/rate", "200 Gb/sec (2X NDR)\n");
  const auto lines = wait_for("[link.degraded]", 5s);
  ASSERT_EQ(lines.size(), 1u) << "no [link.degraded] after the port retrained";
  EXPECT_NE(lines[0].find(std::string(kDev) + ":1 retrained from 400 Gb/sec (4X NDR) to 200 Gb/sec (2X NDR)"),
            std::string::npos)
      << lines[0];
  std::this_thread::sleep_for(1500ms);  // still lower: not repeated
  EXPECT_EQ(Warnings::with("[link.degraded]").size(), 1u);
}

}  // namespace
}  // namespace railscope::net::verbs
