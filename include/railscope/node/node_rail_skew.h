// SPDX-License-Identifier: Apache-2.0
// Rail skew across the processes of a node (docs/fabric-health.md, step 3): every process's ports, as the
// rail board gives them (rail_board.h), judged together with rail_skew() over one window — the reading
// process's. The board holds cumulative totals; NodeRailWindow keeps each writer's totals at the
// window's start (or when it was first seen in the window) so every port's figures cover the same
// seconds. Pure: the net plugin's sampler (plugin/net/verbs/watch/fabric_watch.cpp) feeds it; unit-tested
// in tests/unit/net_fabric.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "railscope/core/diagnosis.h"
#include "railscope/node/rail_board.h"
#include "railscope/node/rail_skew.h"

namespace railscope::node {

// One port of the node over the window: its writers' figures added, and which writer names it.
struct NodeRail {
  RailRate rate;
  uint64_t reporter = 0;      // the lowest owner token among the port's writers: the one that names it
  std::vector<int32_t> pids;  // the processes that sent on it in the window
};

// A rate above this (10 TB/s, far above any NIC) is a corrupt entry, not a measurement: left out.
inline constexpr double kNodeRailMaxBytesPerSecond = 1e13;
// Busy time beyond the window's length a port can show (a send in flight when the window began lasts
// up to the stall budget): more is a corrupt entry.
inline constexpr uint64_t kNodeRailBusySlackNs = 60'000'000'000;

// Rails of several processes are judged only once each has this much busy time in the window (one
// process's rails need kRailSkewMinBusyNs): processes start at different times and do not move in
// lockstep as one process's rails do, so their first second is start-up, not pace: two healthy
// processes can read far apart early in a window and converge over it (netfabric.rail_skew's healthy
// twin must stay silent with this bound).
inline constexpr uint64_t kNodeRailMinBusyNs = 2'000'000'000;
// Nothing is judged in a window's first seconds, for any rails: the rails of one process, too, start
// at different moments (a thread or a connection each), so on a loaded host a healthy rail can trail
// its sibling by half in its first seconds (netfabric.rail_skew's one-process healthy twin: 0.40x at a
// cost of 15 % of a 3.5 s window, the faster rail busy 0.13 s of it). A slow rail is named a few seconds
// later; a job runs for hours.
inline constexpr double kNodeRailMinWindowSeconds = 5.0;

class NodeRailWindow {
 public:
  // The window so far from `entries` (this process's ports and the board's other writers' fresh
  // ones) and the writers seen earlier in the window: each writer's latest totals less its baseline
  // (when it is new in the window: its totals at the start of its own window, as it published them,
  // so the sends it made before this reader first saw it count; when its totals went backwards,
  // another writer took the slot: from then). A writer that stopped (its connections closed, it ended) keeps
  // its last figures until the window ends, as this process's own closed ports do. Writers of one port are
  // added: bytes and transfers summed, busy time the largest of them (their sends share the port's link, so
  // their busy intervals overlap). `left_out` counts writers whose window figures are not a measurement (busy
  // time over a minute longer than the window, an impossible rate).
  std::vector<NodeRail> update(const std::vector<RailBoardEntry>& entries, int64_t window_ns, int* left_out);
  // A new window starts at these totals.
  void restart(const std::vector<RailBoardEntry>& entries);

 private:
  struct Totals {
    uint64_t bytes = 0;
    uint64_t busy_ns = 0;
    uint64_t transfers = 0;
  };
  struct Writer {
    uint64_t owner = 0;
    std::string port;
    int32_t pid = 0;
    Totals base;    // at the window's start or first sighting
    Totals latest;  // last seen
  };
  Writer* find(uint64_t owner, const std::string& port);
  std::vector<Writer> writers_;  // bounded: the writers seen in one window (board slots + own ports)
};

struct NodeRailSkew {
  std::optional<diag::Finding> finding;  // rail_skew() over the node's ports
  bool mine = false;                     // `me` is the slow port's reporter: it logs the finding
};

// rail_skew() over `rails` (of several processes: those with kNodeRailMinBusyNs of busy time), once the
// window has run kNodeRailMinWindowSeconds; `mine`
// when the slow port's reporter is `me`, so that of all the processes of the node that see it exactly
// one names it.
NodeRailSkew node_rail_skew(const std::vector<NodeRail>& rails, double seconds, uint64_t me);

}  // namespace railscope::node
