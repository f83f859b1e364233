// SPDX-License-Identifier: Apache-2.0
// Rank 0's bookkeeping of the link steps (see link_steps.h).
#include "link_steps.h"

#include <fmt/format.h>

#include <algorithm>

namespace railscope::preflight {

void LostRanks::lose(size_t k, int step, std::string reason) {
  if (step_[k] != INT_MAX) return;
  step_[k] = step;
  reason_[k] = std::move(reason);
}

std::vector<LinkTask> runnable(const std::vector<LinkTask>& step_tasks, const LostRanks& lost, int step) {
  std::vector<LinkTask> out;
  for (const auto& t : step_tasks)
    if (!lost.lost_by(t.peer, step - 1)) out.push_back(t);
  return out;
}

std::vector<TaskResult> step_results(size_t k, const std::vector<LinkTask>& step_tasks,
                                     const std::optional<std::vector<TaskResult>>& ran, const LostRanks& lost,
                                     int step) {
  std::vector<TaskResult> out;
  size_t next = 0;
  for (const auto& t : step_tasks) {
    TaskResult r;
    r.rail = t.rail;
    const bool sent = !lost.lost_by(t.peer, step - 1);
    if (lost.lost_by(k, step))
      r.error = lost.reason(k);
    else if (!sent)
      r.error = lost.reason(t.peer);
    else if (ran && next < ran->size())
      r = (*ran)[next];
    else
      r.error = "no result";
    if (sent) ++next;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<LinkMeasurement> links_from_results(const LinkPlan& plan, const std::vector<NodeReport>& nodes,
                                                const std::vector<std::vector<TaskResult>>& results,
                                                const LostRanks& lost, double line_rate_GBps) {
  std::vector<const TaskResult*> client_res(plan.links.size(), nullptr);
  std::vector<const TaskResult*> server_res(plan.links.size(), nullptr);
  for (size_t k = 0; k < nodes.size() && k < results.size(); ++k)
    for (size_t i = 0; i < plan.tasks[k].size() && i < results[k].size(); ++i) {
      const LinkTask& t = plan.tasks[k][i];
      for (size_t p = 0; p < plan.links.size(); ++p) {
        const PlannedLink& pl = plan.links[p];
        if (pl.step == t.step && pl.rail == t.rail && (t.server ? pl.server : pl.client) == k)
          (t.server ? server_res : client_res)[p] = &results[k][i];
      }
    }
  std::vector<LinkMeasurement> out;
  for (size_t p = 0; p < plan.links.size(); ++p) {
    const PlannedLink& pl = plan.links[p];
    const NicSummary& cn = nodes[pl.client].nics[size_t(pl.rail)];
    const NicSummary& sn = nodes[pl.server].nics[size_t(pl.rail)];
    const TaskResult* c = client_res[p];
    const TaskResult* sv = server_res[p];
    // The end lost first (by this step) is the cause; then the server's failure, then the client's.
    const bool client_lost = lost.lost_by(pl.client, pl.step);
    const bool server_lost = lost.lost_by(pl.server, pl.step);
    const std::string err = client_lost && (!server_lost || lost.step(pl.client) <= lost.step(pl.server))
                                ? lost.reason(pl.client)
                            : server_lost     ? lost.reason(pl.server)
                            : (sv && !sv->ok) ? nodes[pl.server].host + ": " + sv->error
                            : !c              ? "no result"
                            : !c->ok          ? nodes[pl.client].host + ": " + c->error
                                              : "";
    if (pl.measure == Measure::Latency) {
      // Onto the a -> b bandwidth link of the same rail measured just before.
      for (auto it = out.rbegin(); it != out.rend(); ++it)
        if (it->rail == pl.rail && it->src_node == nodes[pl.client].host &&
            it->dst_node == nodes[pl.server].host) {
          if (err.empty()) it->lat_us = c->lat_us;
          break;
        }
      continue;
    }
    LinkMeasurement m;
    m.rail = pl.rail;
    m.src_node = nodes[pl.client].host;
    m.src_nic = cn.name();
    m.dst_node = nodes[pl.server].host;
    m.dst_nic = sn.name();
    m.src_rank = nodes[pl.client].rank;
    m.dst_rank = nodes[pl.server].rank;
    m.GBps = err.empty() ? c->gbs : 0;
    m.error = err;
    if (c) m.src_counters = c->counters;
    if (sv) m.dst_counters = sv->counters;
    const int64_t a = cn.speed_mbps ? cn.speed_mbps : sn.speed_mbps;
    const int64_t b = sn.speed_mbps ? sn.speed_mbps : cn.speed_mbps;
    m.line_GBps = line_rate_GBps > 0 ? line_rate_GBps : static_cast<double>(std::min(a, b)) / 8000.0;
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<diag::Finding> lost_findings(const LinkPlan& plan, const std::vector<NodeReport>& nodes,
                                         const LostRanks& lost) {
  std::vector<diag::Finding> out;
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (!lost.lost_by(k, INT_MAX - 1)) continue;
    size_t later = 0;
    for (const auto& pl : plan.links)
      if ((pl.client == k || pl.server == k) && pl.step > lost.step(k)) ++later;
    out.push_back(diag::make("preflight.node_lost",
                             fmt::format("{}; the {} later link test(s) of {} failed without running",
                                         lost.reason(k), later, nodes[k].host)));
  }
  return out;
}

}  // namespace railscope::preflight
