// SPDX-License-Identifier: Apache-2.0
// The stats line says whether it is periodic or the last one, and carries the ports' counter deltas.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plugin/net/common/stats.h"

namespace railscope::net {
namespace {

TEST(PeriodicStats, FinalFlagAndFabricDeltas) {
  ConnIdentity who;
  who.role = "send";
  who.final = false;
  who.fabric = {{"loss", 17}, {"traffic", 1194}};
  ConnStats s;
  auto j = nlohmann::json::parse(stats_json(who, s));
  EXPECT_EQ(j["final"], false);
  EXPECT_EQ(j["fabric"]["loss"], 17);
  EXPECT_EQ(j["fabric"]["traffic"], 1194);
  who.final = true;
  who.fabric.clear();  // the TCP engine: no ports to sample
  j = nlohmann::json::parse(stats_json(who, s));
  EXPECT_EQ(j["final"], true);
  EXPECT_FALSE(j.contains("fabric"));
}

// The verbs engine's per-port rates (fabric.rail_skew's figures) ride along as one more member.
TEST(PeriodicStats, EngineMembersAreAppended) {
  ConnIdentity who;
  who.role = "send";
  who.fabric = {{"loss", 0}};
  who.extra_json =
      R"(,"rail_rate":[{"port":"rxe1:1","gbs":0.0135,"bytes":25165824,"busy_s":1.86,"transfers":24}])";
  ConnStats s;
  const auto j = nlohmann::json::parse(stats_json(who, s));
  ASSERT_EQ(j["rail_rate"].size(), 1u);
  EXPECT_EQ(j["rail_rate"][0]["port"], "rxe1:1");
  EXPECT_EQ(j["rail_rate"][0]["transfers"], 24);
  EXPECT_EQ(j["fabric"]["loss"], 0);
}

// Periodic lines come only from connections that moved something since their last line: an idle
// connection (thousands of them in an all-to-all) writes none; a hung one wrote its state once.
TEST(PeriodicStats, OnlyAConnectionThatMovedWritesAPeriodicLine) {
  StatsChange seen;
  ConnStats s;
  EXPECT_FALSE(seen.moved(s)) << "nothing posted yet";
  s.posted();
  EXPECT_TRUE(seen.moved(s)) << "a message in flight";
  EXPECT_FALSE(seen.moved(s)) << "still the same one in flight (a hang): already written";
  s.completed(1024, 3);
  EXPECT_TRUE(seen.moved(s)) << "it completed";
  EXPECT_FALSE(seen.moved(s)) << "idle";
  s.posted();
  s.completed(1024, 3);
  EXPECT_TRUE(seen.moved(s)) << "one more message in the interval, none in flight at either line";
}

}  // namespace
}  // namespace railscope::net
