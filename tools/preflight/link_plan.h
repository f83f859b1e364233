// SPDX-License-Identifier: Apache-2.0
// The link measurements of a run, step by step: for every round of the pairing schedule (schedule.h),
// per rail, first a → b, then b → a (bandwidth), then a ↔ b (latency, 8 B ping-pong) unless turned off.
// In a step every rank has at most one task per rail: be the netbench server on its NIC of that rail, or
// the client that connects to the peer's NIC (its IPv4 address carries the out-of-band TCP, so each rail's
// measurement stays on that rail's network). Pure: rank 0 builds it from the reports that joined.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "link_counters.h"
#include "node_report.h"

namespace railscope::preflight {

enum class Measure { Bandwidth, Latency };

struct LinkTask {
  int step = 0;
  int rail = 0;
  bool server = false;
  std::string dev;       // this rank's NIC on the rail
  int port = 1;          // its port (whose counters are sampled around the task)
  std::string netdev;    // its RoCE netdev (ethtool statistics); empty: InfiniBand
  std::string oob_host;  // server: the address it listens on; client: the server's address
  uint16_t oob_port = 0;
  Measure measure = Measure::Bandwidth;
  size_t peer = 0;  // rank 0's index of the other end's report (not on the wire)
};

struct PlannedLink {
  int step = 0;
  int rail = 0;
  size_t client = 0;  // index into the reports (the sender of a bandwidth step)
  size_t server = 0;
  Measure measure = Measure::Bandwidth;
};

struct LinkPlan {
  int steps = 0;
  std::vector<PlannedLink> links;            // in step order
  std::vector<std::vector<LinkTask>> tasks;  // [report index] -> its tasks, in step order
};

// `nodes` are the reports that joined (any rank order); rails are compared up to the fewest a pair has,
// and only ports that are ACTIVE with an IPv4 address. Port of rail i: base_port + 1 + i.
LinkPlan plan_links(const std::vector<NodeReport>& nodes, bool full, bool latency, uint16_t base_port);

// A step's tasks as rank 0 sends them, and as a rank reads them back (checked: bounded, typed).
nlohmann::json tasks_to_json(int step, const std::vector<LinkTask>& tasks);
std::optional<std::vector<LinkTask>> tasks_from_json(const nlohmann::json& j, int step, std::string* error);

// A task's outcome, as a rank sends it back and rank 0 reads it (checked: finite, non-negative, bounded).
// The message is railscope.preflight.results/2, bandwidth "gbs"; results/1 (bandwidth "GBps", the same
// unit) from a rank of an earlier version is read as well.
inline constexpr const char* kResultsSchema = "railscope.preflight.results/2";
inline constexpr const char* kResultsSchemaV1 = "railscope.preflight.results/1";
struct TaskResult {
  int rail = 0;
  bool ok = false;
  double gbs = 0;  // GB/s, 10^9 bytes per second
  double lat_us = 0;
  std::string error;
  std::optional<EndCounters> counters;  // this end's port over the task; none when not sampled
};
nlohmann::json results_to_json(int step, const std::vector<TaskResult>& results);
std::optional<std::vector<TaskResult>> results_from_json(const nlohmann::json& j, int step, size_t max,
                                                         std::string* error);

}  // namespace railscope::preflight
