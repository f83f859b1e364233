// SPDX-License-Identifier: Apache-2.0
// Rail skew across the processes of a node (node_rail_skew.h).
#include "railscope/node/node_rail_skew.h"

#include <algorithm>

namespace railscope::node {

NodeRailWindow::Writer* NodeRailWindow::find(uint64_t owner, const std::string& port) {
  for (Writer& w : writers_)
    if (w.owner == owner && w.port == port) return &w;
  return nullptr;
}

std::vector<NodeRail> NodeRailWindow::update(const std::vector<RailBoardEntry>& entries, int64_t window_ns,
                                             int* left_out) {
  *left_out = 0;
  for (const RailBoardEntry& e : entries) {
    const Totals now{e.bytes, e.busy_ns, e.transfers};
    Writer* w = find(e.owner, e.port);
    if (w == nullptr) {
      // New in this window: counts from the start of the writer's own window (its sends before this
      // reader first saw it; a start above the totals is not one: from now). Bounded: one per writer
      // and port, and the board has a fixed number of slots (a flood of new tokens is cut off).
      if (writers_.size() >= 2 * kRailBoardSlots) continue;
      Totals start{e.start_bytes, e.start_busy_ns, e.start_transfers};
      if (start.bytes > now.bytes || start.busy_ns > now.busy_ns || start.transfers > now.transfers)
        start = now;
      writers_.push_back({e.owner, e.port, e.pid, start, now});
      continue;
    }
    // Totals that went backwards: a new writer in the slot; it counts from now.
    if (now.bytes < w->latest.bytes || now.busy_ns < w->latest.busy_ns || now.transfers < w->latest.transfers)
      w->base = now;
    w->latest = now;
    w->pid = e.pid;
  }
  std::vector<NodeRail> out;
  for (const Writer& w : writers_) {
    const RailRate d{w.port, w.latest.bytes - w.base.bytes, w.latest.busy_ns - w.base.busy_ns,
                     w.latest.transfers - w.base.transfers};
    if (d.transfers == 0) continue;
    // Busy time is the union of the port's send intervals within the window, plus the part of a send
    // in flight when it began: a send lasts at most the stall budget (34 s at NCCL's defaults), so
    // more than a minute beyond the window is not a port's.
    if (d.busy_ns > static_cast<uint64_t>(std::max<int64_t>(window_ns, 0)) + kNodeRailBusySlackNs ||
        d.bytes_per_second() > kNodeRailMaxBytesPerSecond) {
      ++*left_out;
      continue;
    }
    auto same =
        std::find_if(out.begin(), out.end(), [&](const NodeRail& r) { return r.rate.port == w.port; });
    if (same == out.end()) {
      out.push_back({d, w.owner, {w.pid}});
      continue;
    }
    same->rate.bytes += d.bytes;
    same->rate.transfers += d.transfers;
    same->rate.busy_ns = std::max(same->rate.busy_ns, d.busy_ns);
    same->reporter = std::min(same->reporter, w.owner);
    same->pids.push_back(w.pid);
  }
  return out;
}

void NodeRailWindow::restart(const std::vector<RailBoardEntry>& entries) {
  writers_.clear();
  for (const RailBoardEntry& e : entries) {
    if (writers_.size() >= 2 * kRailBoardSlots) break;
    const Totals now{e.bytes, e.busy_ns, e.transfers};
    writers_.push_back({e.owner, e.port, e.pid, now, now});
  }
}

NodeRailSkew node_rail_skew(const std::vector<NodeRail>& rails, double seconds, uint64_t me) {
  if (rails.empty() || !(seconds >= kNodeRailMinWindowSeconds)) return {};
  // Rails of several processes: see kNodeRailMinBusyNs.
  bool several = false;
  for (const NodeRail& r : rails)
    several = several || r.reporter != rails.front().reporter || r.pids.size() > 1;
  std::vector<RailRate> rates;
  std::vector<size_t> at;  // index in `rails` of each rate
  rates.reserve(rails.size());
  for (size_t i = 0; i < rails.size(); ++i) {
    if (several && rails[i].rate.busy_ns < kNodeRailMinBusyNs) continue;
    rates.push_back(rails[i].rate);
    at.push_back(i);
  }
  NodeRailSkew out;
  const std::optional<size_t> slow = slow_rail(rates);
  if (!slow) return out;
  out.finding = rail_skew(rates, seconds);
  out.mine = rails[at[*slow]].reporter == me;
  return out;
}

}  // namespace railscope::node
