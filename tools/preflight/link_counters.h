// SPDX-License-Identifier: Apache-2.0
// The counters of the ports a link test used, before and after it, on each end: each rank samples the
// port of each of its tasks (node::PortSampler) around the netbench children and sends the non-zero
// deltas with the task's result; rank 0 attaches them to the link and, for a slow one, says what they
// show, judged as the net plugin judges a window of a running job (node::fabric_findings: thresholds
// that keep a healthy run silent).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "railscope/node/port_counters.h"

namespace railscope::preflight {

struct EndCounters {
  std::string port;         // "rxe3:1"
  bool readable = false;    // the port has counter files (a sysfs without them: false, no deltas)
  bool infiniband = false;  // no netdev: judged as InfiniBand
  double seconds = 0;       // between the two snapshots
  std::vector<node::CounterDelta> deltas;  // the counters that moved
};

// At most this many deltas travel per end: the judged categories first, then traffic, then the rest.
constexpr size_t kMaxDeltas = 96;

// The deltas of a port between two snapshots, bounded (kMaxDeltas).
EndCounters end_counters(const node::PortCounters& before, const node::PortCounters& after, bool readable,
                         bool infiniband, double seconds);

// Wire form (in a task's result) and its checked reading: names are plain and bounded, each category is
// taken again from the name (node::counter_category), never from the peer.
nlohmann::json to_json(const EndCounters& c);
std::optional<EndCounters> end_counters_from_json(const nlohmann::json& j, std::string* error);

// The totals per category that moved ({"loss": 412, "traffic": 9000, ...}), for the verdict's JSON.
nlohmann::json category_totals(const EndCounters& c);

// What the counters of a slow link's two ends say, one clause for the link.slow finding:
// "counters: hostB/rxe3:1 (sender): 412 lost-packet events (...) [fabric.packet_loss]" or
// "counters clean on both ends in 3.1 s (no loss, congestion, pause, link error or discard above the net
// plugin's thresholds): a rate limit or congestion outside the NIC". `*_name`: "host/port".
std::string counters_note(const std::string& sender_name, const std::optional<EndCounters>& sender,
                          const std::string& receiver_name, const std::optional<EndCounters>& receiver);

}  // namespace railscope::preflight
