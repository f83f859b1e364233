// SPDX-License-Identifier: Apache-2.0
// Runs one step's link tasks on this node: each task is a `railscope netbench server|client` child
// process (tools/netbench: the net plugin loaded through lib/pluginload, as NCCL would), all of a step's
// tasks at once, each bounded by its own --timeout and killed past it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "link_plan.h"

namespace railscope::preflight {

struct LinkOptions {
  std::string plugin;             // netbench --plugin ("" = railscope's)
  uint64_t size = 4ull << 20;     // bandwidth message size
  uint64_t bytes = 256ull << 20;  // bandwidth bytes per measurement (netbench --bytes-per-size)
  uint32_t lat_iters = 200;
  int timeout_s = 60;
  std::string poll = "yield";      // netbench --poll: yield (as NCCL's proxy), spin, sleep
  std::string sysfs_root;          // where the ports' counters are read ("" = the default, /sys)
  bool counters = true;            // sample each task's port before and after (link_counters.h)
  std::string log_level = "warn";  // the netbench children's --log-level: their progress is not the user's
};

// Results in the order of `tasks`. Server tasks report ok/failure only; clients carry the figures. Each
// carries the counter deltas of its port over the step (node::PortSampler before the children start and
// after the last one ended) unless o.counters is off.
std::vector<TaskResult> run_tasks(const std::vector<LinkTask>& tasks, const LinkOptions& o);

// netbench's command line for a task (without the executable).
std::vector<std::string> netbench_args(const LinkTask& t, const LinkOptions& o);

}  // namespace railscope::preflight
