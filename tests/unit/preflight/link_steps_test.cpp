// SPDX-License-Identifier: Apache-2.0
// Rank 0's bookkeeping of the link steps (tools/preflight/link_steps.h): a rank that stopped answering is
// the cause of its links, and the later tasks with it are failed at once instead of run.
#include <gtest/gtest.h>

#include "link_steps.h"
#include "synthetic_node.h"

namespace railscope::preflight {
namespace {

std::vector<NodeReport> nodes_of(int n) {
  std::vector<NodeReport> nodes;
  for (int i = 0; i < n; ++i) nodes.push_back(healthy_node(i, 1));
  return nodes;
}

std::vector<LinkTask> of_step(const LinkPlan& plan, size_t k, int step) {
  std::vector<LinkTask> out;
  for (const auto& t : plan.tasks[k])
    if (t.step == step) out.push_back(t);
  return out;
}

TaskResult ok_result(const LinkTask& t) {
  TaskResult r;
  r.rail = t.rail;
  r.ok = true;
  r.gbs = t.server ? 0 : 40;
  r.lat_us = !t.server && t.measure == Measure::Latency ? 3 : 0;
  return r;
}

// Runs the plan as rank 0 does: every node's runnable tasks of each step succeed, except that node
// `lost_node` does not answer `lost_step` and rank 0's own tasks with it in that step time out (the
// netbench server waited for a client that never came). Returns the tasks run, per node.
std::vector<size_t> run_plan(const LinkPlan& plan, size_t n, LostRanks& lost,
                             std::vector<std::vector<TaskResult>>& results, size_t lost_node, int lost_step) {
  std::vector<size_t> ran_count(n, 0);
  results.assign(n, {});
  for (int step = 0; step < plan.steps; ++step)
    for (size_t k = 0; k < n; ++k) {
      const auto now = of_step(plan, k, step);
      const auto run = runnable(now, lost, step);
      std::optional<std::vector<TaskResult>> got;
      if (!lost.lost_by(k, step - 1)) {
        ran_count[k] += run.size();
        if (k == lost_node && step == lost_step) {
          lost.lose(k, step, "rank 2 (node002) did not answer step 0: connection closed");
        } else {
          got.emplace();
          for (const auto& t : run) {
            TaskResult r = ok_result(t);
            if (step == lost_step && t.peer == lost_node)
              r.ok = false, r.error = "netbench server: exit status 1";
            got->push_back(r);
          }
        }
      }
      for (auto& r : step_results(k, now, got, lost, step)) results[k].push_back(std::move(r));
    }
  return ran_count;
}

TEST(LinkSteps, HealthyPlanEveryLinkMeasuredNoFinding) {
  const auto nodes = nodes_of(4);
  const LinkPlan plan = plan_links(nodes, false, true, 29555);
  LostRanks lost(nodes.size());
  std::vector<std::vector<TaskResult>> results;
  const auto ran = run_plan(plan, nodes.size(), lost, results, 99, -1);
  for (size_t k = 0; k < nodes.size(); ++k) EXPECT_EQ(ran[k], plan.tasks[k].size()) << k;
  const auto links = links_from_results(plan, nodes, results, lost, 0);
  ASSERT_FALSE(links.empty());
  size_t with_latency = 0;  // the ping-pong goes onto the a -> b link of its pair, not b -> a
  for (const auto& l : links) {
    EXPECT_EQ(l.error, "") << l.src_node << " -> " << l.dst_node;
    EXPECT_EQ(l.GBps, 40);
    with_latency += l.lat_us == 3;
  }
  EXPECT_EQ(with_latency * 2, links.size());
  EXPECT_TRUE(lost_findings(plan, nodes, lost).empty());
}

TEST(LinkSteps, LostRankIsTheCauseAndItsLaterTasksAreNotRun) {
  const auto nodes = nodes_of(4);
  const LinkPlan plan = plan_links(nodes, false, true, 29555);
  LostRanks lost(nodes.size());
  std::vector<std::vector<TaskResult>> results;
  const auto ran = run_plan(plan, nodes.size(), lost, results, 2, 0);
  // Node 2 and every task paired with it after step 0 are not run; the others still are.
  size_t with_2_later = 0;
  for (size_t k = 0; k < nodes.size(); ++k) {
    size_t expected = 0;
    for (const auto& t : plan.tasks[k]) {
      const bool skipped = k == 2 ? t.step > 0 : t.peer == 2 && t.step > 0;
      expected += skipped ? 0 : 1;
      if (k != 2 && t.peer == 2 && t.step > 0) ++with_2_later;
    }
    EXPECT_EQ(ran[k], expected) << "node " << k;
  }
  ASSERT_GT(with_2_later, 0u);
  // Every link with node 2 from step 0 on names it, never its peer's server or client failure.
  const auto links = links_from_results(plan, nodes, results, lost, 0);
  size_t named = 0;
  for (const auto& l : links) {
    const bool with_2 = l.src_node == "node002" || l.dst_node == "node002";
    if (with_2 && !l.error.empty()) {
      EXPECT_EQ(l.error, "rank 2 (node002) did not answer step 0: connection closed");
      ++named;
    }
    if (!with_2) {
      EXPECT_EQ(l.error, "") << l.src_node << " -> " << l.dst_node;
    }
  }
  EXPECT_GT(named, 0u);
  const auto f = lost_findings(plan, nodes, lost);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id(), "preflight.node_lost");
  EXPECT_EQ(f[0].severity, diag::Severity::Error);
  EXPECT_NE(f[0].detail.find("rank 2 (node002) did not answer step 0: connection closed; the "),
            std::string::npos)
      << f[0].detail;
  EXPECT_NE(f[0].detail.find("later link test(s) of node002 failed without running"), std::string::npos);
}

TEST(LinkSteps, StepResultsKeepTaskOrder) {
  // Node 0 has two rails' tasks in a step; rail 1's peer was lost before: rail 0's result is the one run.
  LostRanks lost(3);
  lost.lose(2, 0, "rank 2 (c) is gone");
  const std::vector<LinkTask> now{{1, 0, true, "d0", 1, "", "10.0.0.1", 9, Measure::Bandwidth, 1},
                                  {1, 1, true, "d1", 1, "", "10.1.0.1", 10, Measure::Bandwidth, 2}};
  const auto run = runnable(now, lost, 1);
  ASSERT_EQ(run.size(), 1u);
  EXPECT_EQ(run[0].rail, 0);
  TaskResult ok;
  ok.rail = 0;
  ok.ok = true;
  const auto r = step_results(0, now, std::vector<TaskResult>{ok}, lost, 1);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(r[0].ok);
  EXPECT_FALSE(r[1].ok);
  EXPECT_EQ(r[1].error, "rank 2 (c) is gone");
  // The first loss is kept.
  lost.lose(2, 1, "later");
  EXPECT_EQ(lost.step(2), 0);
  EXPECT_EQ(lost.reason(2), "rank 2 (c) is gone");
}

}  // namespace
}  // namespace railscope::preflight
