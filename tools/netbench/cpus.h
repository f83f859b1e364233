// SPDX-License-Identifier: Apache-2.0
// Which CPUs the ends of `netbench --pair` run on. Under a small guest (the soft-RoCE test bed: two
// vCPUs shared by both ends and rxe's kernel work) where the scheduler places the two processes decides
// the rate a run gets more than the plugin does (bench/net_vs_reference/README.md, "Pin the ends");
// --pin-cpus A,B fixes the placement so runs compare plugins.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace railscope::netbench {

// The CPUs this process may run on (sched_getaffinity), ascending.
std::vector<int> allowed_cpus();

struct CpuPair {
  int server = -1;  // the receiving end (--pair's first device)
  int client = -1;  // the sending end
};

// "A,B": two CPUs this process may run on (they may be the same). nullopt and *why otherwise.
std::optional<CpuPair> parse_cpu_pair(const std::string& text, std::string* why);

// Restricts the calling process to one CPU; false (errno set) when the kernel refuses.
bool pin_to_cpu(int cpu);

}  // namespace railscope::netbench
