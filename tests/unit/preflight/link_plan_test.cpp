// SPDX-License-Identifier: Apache-2.0
// Link steps from node reports, and the step/result messages a rank and rank 0 read from each other
// (tools/preflight/link_plan.h).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <set>

#include "link_plan.h"

namespace railscope::preflight {
namespace {

NodeReport node(int rank, int rails) {
  NodeReport r;
  r.rank = rank;
  r.host = fmt::format("n{}", rank);
  for (int i = 0; i < rails; ++i) {
    NicSummary n;
    n.device = fmt::format("mlx5_{}", i);
    n.state = "ACTIVE";
    n.ipv4 = fmt::format("10.{}.0.{}", i, rank + 1);
    r.nics.push_back(n);
  }
  return r;
}

TEST(LinkPlan, EveryStepOneTaskPerRankAndRail) {
  for (int n : {2, 3, 8, 33}) {
    std::vector<NodeReport> nodes;
    for (int i = 0; i < n; ++i) nodes.push_back(node(i, 4));
    const LinkPlan plan = plan_links(nodes, false, true, 29555);
    ASSERT_GT(plan.steps, 0);
    for (size_t k = 0; k < nodes.size(); ++k) {
      std::set<std::pair<int, int>> seen;  // (step, rail)
      for (const auto& t : plan.tasks[k]) {
        EXPECT_TRUE(seen.insert({t.step, t.rail}).second)
            << "n=" << n << " node " << k << " twice in a step/rail";
        EXPECT_EQ(t.oob_port, 29556 + t.rail);
        EXPECT_EQ(t.dev, fmt::format("mlx5_{}", t.rail));
      }
    }
    // Both directions of every pair on every rail, and the client's server address is the peer's NIC of
    // the same rail.
    std::map<std::tuple<size_t, size_t, int>, int> bw;
    for (const auto& l : plan.links)
      if (l.measure == Measure::Bandwidth) ++bw[{l.client, l.server, l.rail}];
    for (const auto& [key, count] : bw) {
      const auto& [c, s, rail] = key;
      EXPECT_GE(bw.count({s, c, rail}), 1u) << "n=" << n << ": " << s << "->" << c << " missing";
    }
    for (size_t k = 0; k < nodes.size(); ++k)
      for (const auto& t : plan.tasks[k])
        if (!t.server) {
          EXPECT_NE(t.oob_host.find(fmt::format("10.{}.0.", t.rail)), std::string::npos);
        }
  }
}

TEST(LinkPlan, RailsLimitedToTheFewerAndToUsablePorts) {
  std::vector<NodeReport> nodes{node(0, 3), node(1, 2)};
  nodes[0].nics[1].state = "DOWN";
  const LinkPlan plan = plan_links(nodes, false, false, 100);
  EXPECT_EQ(plan.steps, 2);          // one round, two directions
  ASSERT_EQ(plan.links.size(), 2u);  // rail 0 only: rail 1 is down on n0, rail 2 missing on n1
  EXPECT_EQ(plan.links[0].rail, 0);
  EXPECT_EQ(plan.links[0].client, 0u);
  EXPECT_EQ(plan.links[1].client, 1u);
}

TEST(LinkPlan, StepMessagesRoundTripAndRefuseBadOnes) {
  const std::vector<LinkTask> tasks{{3, 1, false, "rxe3", 1, "eth3", "10.0.1.2", 29557, Measure::Latency}};
  std::string e;
  const auto back = tasks_from_json(tasks_to_json(3, tasks), 3, &e);
  ASSERT_TRUE(back) << e;
  EXPECT_EQ(back->at(0).dev, "rxe3");
  EXPECT_EQ(back->at(0).measure, Measure::Latency);
  EXPECT_FALSE(tasks_from_json(tasks_to_json(3, tasks), 4, &e));
  for (const char* dev : {"--plugin=/tmp/x", "a b", "x;y", ""}) {
    auto bad = tasks;
    bad[0].dev = dev;
    EXPECT_FALSE(tasks_from_json(tasks_to_json(3, bad), 3, &e)) << dev;
  }
  auto j = tasks_to_json(3, tasks);
  j["tasks"][0]["oob_port"] = 0;
  EXPECT_FALSE(tasks_from_json(j, 3, &e));
  // The port and netdev whose counters are sampled: checked, and optional (port 1, no netdev).
  EXPECT_EQ(back->at(0).port, 1);
  EXPECT_EQ(back->at(0).netdev, "eth3");
  for (const nlohmann::json& bad : {nlohmann::json(0), nlohmann::json(256), nlohmann::json("1")}) {
    j = tasks_to_json(3, tasks);
    j["tasks"][0]["port"] = bad;
    EXPECT_FALSE(tasks_from_json(j, 3, &e)) << bad;
  }
  j = tasks_to_json(3, tasks);
  j["tasks"][0]["netdev"] = "eth0 --plugin=x";
  EXPECT_FALSE(tasks_from_json(j, 3, &e));
  j = tasks_to_json(3, tasks);
  j["tasks"][0].erase("port");
  j["tasks"][0].erase("netdev");
  const auto old = tasks_from_json(j, 3, &e);
  ASSERT_TRUE(old) << e;
  EXPECT_EQ(old->at(0).port, 1);
  EXPECT_EQ(old->at(0).netdev, "");
}

// Bandwidth is "gbs" (GB/s, docs/cli.md's units), in results/2. A rank of an earlier build sends
// results/1 with "GBps" in the same unit: read as such. The key of one version in the other's message is
// a missing field, named in the error.
TEST(LinkPlan, ResultMessagesOfTheEarlierVersionAreStillRead) {
  std::string e;
  const auto sent = results_to_json(7, {{0, true, 12.5, 3.2, "", std::nullopt}});
  EXPECT_EQ(sent.at("schema"), "railscope.preflight.results/2");
  EXPECT_EQ(sent.at("results").at(0).at("gbs"), 12.5);
  EXPECT_FALSE(sent.at("results").at(0).contains("GBps"));

  const auto older = nlohmann::json::parse(
      R"({"schema":"railscope.preflight.results/1","step":7,"results":[{"rail":0,"ok":true,"GBps":48.5,)"
      R"("lat_us":0,"error":""}]})");
  const auto read = results_from_json(older, 7, 1, &e);
  ASSERT_TRUE(read) << e;
  EXPECT_EQ(read->at(0).gbs, 48.5);
  auto bad = older;
  bad["results"][0]["GBps"] = 2e6;  // the earlier version's key is checked as the new one is
  EXPECT_FALSE(results_from_json(bad, 7, 1, &e));
  EXPECT_NE(e.find("out of range"), std::string::npos) << e;

  auto mixed = older;
  mixed["schema"] = "railscope.preflight.results/2";
  EXPECT_FALSE(results_from_json(mixed, 7, 1, &e));
  EXPECT_NE(e.find("gbs"), std::string::npos) << e;
  mixed = sent;
  mixed["schema"] = "railscope.preflight.results/1";
  EXPECT_FALSE(results_from_json(mixed, 7, 1, &e));
  EXPECT_NE(e.find("GBps"), std::string::npos) << e;
  mixed["schema"] = "railscope.preflight.results/3";
  EXPECT_FALSE(results_from_json(mixed, 7, 1, &e));
  EXPECT_EQ(e, "not step results");
}

TEST(LinkPlan, ResultMessagesChecked) {
  std::string e;
  const std::vector<TaskResult> ok{{0, true, 12.5, 3.2, "", std::nullopt}};
  const auto back = results_from_json(results_to_json(7, ok), 7, 1, &e);
  ASSERT_TRUE(back) << e;
  EXPECT_EQ(back->at(0).gbs, 12.5);
  EXPECT_FALSE(results_from_json(results_to_json(7, ok), 8, 1, &e));
  EXPECT_FALSE(results_from_json(results_to_json(7, {ok[0], ok[0]}), 7, 1, &e));  // more than sent
  auto j = results_to_json(7, ok);
  j["results"][0]["gbs"] = -1;
  EXPECT_FALSE(results_from_json(j, 7, 1, &e));
  j = results_to_json(7, ok);
  j["results"][0]["error"] = "a\nb";
  EXPECT_FALSE(results_from_json(j, 7, 1, &e));
  j = results_to_json(7, ok);
  j["results"][0]["lat_us"] = "fast";
  EXPECT_FALSE(results_from_json(j, 7, 1, &e));
  // A result's counters travel with it and are checked (link_counters_test.cpp has the details).
  std::vector<TaskResult> with = ok;
  with[0].counters = EndCounters{"rxe3:1", true, false, 1.5, {}};
  with[0].counters->deltas.push_back({"rcvd_seq_err", node::CounterCategory::Loss, 412, false});
  const auto c = results_from_json(results_to_json(7, with), 7, 1, &e);
  ASSERT_TRUE(c && c->at(0).counters) << e;
  EXPECT_EQ(c->at(0).counters->deltas.at(0).delta, 412u);
  j = results_to_json(7, with);
  j["results"][0]["counters"]["deltas"][0]["name"] = "";
  EXPECT_FALSE(results_from_json(j, 7, 1, &e));
  EXPECT_NE(e.find("counters:"), std::string::npos) << e;
}

}  // namespace
}  // namespace railscope::preflight
