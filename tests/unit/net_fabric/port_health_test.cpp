// SPDX-License-Identifier: Apache-2.0
// PortHealth: the shared state of one port (link outages, use by connections, counter totals).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "plugin/net/verbs/watch/port_health.h"

namespace railscope::net::verbs {
namespace {

using namespace std::chrono_literals;
using Clock = PortHealth::Clock;

TEST(PortHealth, AnOutageIsCountedOnceAndEndsWithItsDuration) {
  PortHealth h;
  const auto t0 = Clock::now();
  EXPECT_FALSE(h.is_down());
  EXPECT_TRUE(h.link_down(t0));
  EXPECT_FALSE(h.link_down(t0 + 100ms));  // the second PORT_ERR of one outage
  EXPECT_TRUE(h.is_down());
  EXPECT_EQ(h.down_since(), t0);
  EXPECT_EQ(h.last_down(), t0);
  EXPECT_FALSE(h.last_down_text().empty());
  EXPECT_EQ(h.generation(), 0u);  // going down fails nothing by itself
  EXPECT_EQ(h.link_up(t0 + 2s), 2s);
  EXPECT_FALSE(h.is_down());
  EXPECT_EQ(h.link_up(t0 + 3s), Clock::duration::zero());  // PORT_ACTIVE without an outage
  Clock::duration d{};
  EXPECT_TRUE(h.take_recovered(&d));
  EXPECT_EQ(d, 2s);
  EXPECT_FALSE(h.take_recovered(&d));
  EXPECT_EQ(h.last_down(), t0);               // remembered after recovery (completion errors name it)
  EXPECT_TRUE(h.down_within(t0 + 11s, 10s));  // back at t0 + 2 s
  EXPECT_FALSE(h.down_within(t0 + 13s, 10s));
}

TEST(PortHealth, NeverDownIsNotARecentOutageEvenRightAfterBoot) {
  PortHealth h;  // the steady clock starts at boot: "epoch + a few seconds" must not read as an outage
  EXPECT_FALSE(h.down_within(Clock::time_point(std::chrono::seconds(3)), 20s));
}

TEST(PortHealth, AnOutageFailsThePortOnce) {
  PortHealth h;
  EXPECT_FALSE(h.first_failure_of_outage());  // up
  const auto t0 = Clock::now();
  h.link_down(t0);
  EXPECT_TRUE(h.first_failure_of_outage());
  EXPECT_FALSE(h.first_failure_of_outage());
  h.link_up(t0 + 1s);
  h.link_down(t0 + 5s);  // a new outage
  EXPECT_TRUE(h.first_failure_of_outage());
}

TEST(PortHealth, UseKeepsTheLargestPathMtuAndBudget) {
  PortHealth h;
  int hook_calls = 0;
  h.set_attach_hook([&] { ++hook_calls; });
  int timeout = -1, retry = -1;
  EXPECT_EQ(h.budget(&timeout, &retry), 0us);
  h.attach(1024, 14, 7, 2000000us);
  h.attach(4096, 20, 7, 34359738us);
  h.attach(2048, 18, 7, 8000000us);
  EXPECT_EQ(hook_calls, 1);  // only the first connection wakes the sampler
  EXPECT_EQ(h.users(), 3);
  EXPECT_EQ(h.path_mtu(), 4096);
  EXPECT_EQ(h.budget(&timeout, &retry), 34359738us);
  EXPECT_EQ(timeout, 20);
  EXPECT_EQ(retry, 7);
  h.detach();
  h.detach();
  EXPECT_EQ(h.path_mtu(), 4096);
  h.detach();
  EXPECT_EQ(h.users(), 0);
  EXPECT_EQ(h.path_mtu(), 0);
  EXPECT_EQ(h.budget(&timeout, &retry), 0us);
  h.attach(1024, 14, 7, 2000000us);
  EXPECT_EQ(hook_calls, 2);
  EXPECT_EQ(h.path_mtu(), 1024);
}

TEST(PortHealth, TotalsAddUpAcrossThreads) {
  PortHealth h;
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; ++i)
    ts.emplace_back([&] {
      CategoryTotals one{};
      one[0] = 1;
      one[5] = 10;
      for (int k = 0; k < 1000; ++k) h.add_totals(one);
    });
  for (auto& t : ts) t.join();
  const CategoryTotals t = h.totals();
  EXPECT_EQ(t[0], 4000u);
  EXPECT_EQ(t[5], 40000u);
  EXPECT_EQ(t[1], 0u);
}

}  // namespace
}  // namespace railscope::net::verbs
