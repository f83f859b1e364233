// Rail skew across the processes of a node (node_rail_skew.h).
#include "railscope/node/node_rail_skew.h"

#include <algorithm>

namespace railscope::node {

NodeRailWindow::Baseline* NodeRailWindow::find(uint64_t owner, const std::string& port) {
  for (Baseline& b : base_)
    if (b.owner == owner && b.port == port) return &b;
  return nullptr;
}

std::vector<NodeRail> NodeRailWindow::update(const std::vector<RailBoardEntry>& entries, int64_t window_ns,
                                             int* left_out) {
  *left_out = 0;
  std::vector<NodeRail> out;
  for (const RailBoardEntry& e : entries) {
    Baseline* b = find(e.owner, e.port);
    if (b == nullptr || e.bytes < b->bytes || e.busy_ns < b->busy_ns || e.transfers < b->transfers) {
      // New in this window, or a new writer in the slot: counts from now. Bounded: one per writer
      // and port, and the board has a fixed number of slots (a flood of new tokens is cut off).
      if (b == nullptr) {
        if (base_.size() >= 2 * kRailBoardSlots) continue;
        base_.push_back({e.owner, e.port, 0, 0, 0});
        b = &base_.back();
      }
      *b = {e.owner, e.port, e.bytes, e.busy_ns, e.transfers};
    }
    const RailRate d{e.port, e.bytes - b->bytes, e.busy_ns - b->busy_ns, e.transfers - b->transfers};
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
        std::find_if(out.begin(), out.end(), [&](const NodeRail& r) { return r.rate.port == e.port; });
    if (same == out.end()) {
      out.push_back({d, e.owner, {e.pid}});
      continue;
    }
    same->rate.bytes += d.bytes;
    same->rate.transfers += d.transfers;
    same->rate.busy_ns = std::max(same->rate.busy_ns, d.busy_ns);
    same->reporter = std::min(same->reporter, e.owner);
    same->pids.push_back(e.pid);
  }
  return out;
}

void NodeRailWindow::restart(const std::vector<RailBoardEntry>& entries) {
  base_.clear();
  for (const RailBoardEntry& e : entries) {
    if (base_.size() >= 2 * kRailBoardSlots) break;
    base_.push_back({e.owner, e.port, e.bytes, e.busy_ns, e.transfers});
  }
}

NodeRailSkew node_rail_skew(const std::vector<NodeRail>& rails, double seconds, uint64_t me) {
  std::vector<RailRate> rates;
  rates.reserve(rails.size());
  for (const NodeRail& r : rails) rates.push_back(r.rate);
  NodeRailSkew out;
  const std::optional<size_t> slow = slow_rail(rates);
  if (!slow) return out;
  out.finding = rail_skew(rates, seconds);
  out.mine = rails[*slow].reporter == me;
  return out;
}

}  // namespace railscope::node
