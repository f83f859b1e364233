// SPDX-License-Identifier: Apache-2.0
// Rank 0's bookkeeping of the link steps (link_plan.h): which ranks stopped answering and in which step.
// A task whose peer stopped answering before its step is neither sent nor run: it fails at once with that
// rank's reason (it would only wait out --link-timeout for nobody). Onto the planned links, a rank that
// stopped answering is the cause before either end's own failure: its peer's netbench only timed out
// waiting for it.
#pragma once

#include <climits>
#include <optional>
#include <string>
#include <vector>

#include "link_plan.h"
#include "link_stats.h"
#include "railscope/core/diagnosis.h"

namespace railscope::preflight {

// By report index: the step in which a node stopped answering, and why.
class LostRanks {
 public:
  explicit LostRanks(size_t nodes) : step_(nodes, INT_MAX), reason_(nodes) {}
  // Node k stopped answering in `step`; the first loss is kept.
  void lose(size_t k, int step, std::string reason);
  // Lost in `step` or before.
  bool lost_by(size_t k, int step) const { return step_[k] <= step; }
  int step(size_t k) const { return step_[k]; }
  const std::string& reason(size_t k) const { return reason_[k]; }

 private:
  std::vector<int> step_;
  std::vector<std::string> reason_;
};

// The tasks of one step a node is sent (or rank 0 runs): those whose peer was not lost before `step`.
std::vector<LinkTask> runnable(const std::vector<LinkTask>& step_tasks, const LostRanks& lost, int step);

// Node k's results of a step, one per task of `step_tasks` in order. `ran`: the results of runnable()'s
// tasks in their order (nullopt: k did not answer). A task not run fails with its peer's reason, every
// task with k's own when k is lost by this step.
std::vector<TaskResult> step_results(size_t k, const std::vector<LinkTask>& step_tasks,
                                     const std::optional<std::vector<TaskResult>>& ran, const LostRanks& lost,
                                     int step);

// Every node's results (one per task of plan.tasks[k], in order) onto the planned links: the client's
// result carries the figure; the cause of a failure is a lost end first, then the server's failure (the
// client then only timed out), then the client's. line_rate_GBps > 0 replaces the NICs' own rates.
std::vector<LinkMeasurement> links_from_results(const LinkPlan& plan, const std::vector<NodeReport>& nodes,
                                                const std::vector<std::vector<TaskResult>>& results,
                                                const LostRanks& lost, double line_rate_GBps);

// One preflight.node_lost per lost node: its host, rank, step, reason, and how many planned link tests
// with it were not run.
std::vector<diag::Finding> lost_findings(const LinkPlan& plan, const std::vector<NodeReport>& nodes,
                                         const LostRanks& lost);

}  // namespace railscope::preflight
