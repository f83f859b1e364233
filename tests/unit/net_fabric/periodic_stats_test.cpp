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

}  // namespace
}  // namespace railscope::net
