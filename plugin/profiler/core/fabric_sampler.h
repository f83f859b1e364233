// SPDX-License-Identifier: Apache-2.0
// The node's RDMA ports as the profiler watches them while the job runs: which ports are
// sampled (the active ports NCCL_IB_HCA selects), which rails were already down or slower than their
// siblings when the job started, and per reporting window each port's counter deltas by category. A port
// is read as the net plugin and `railscope doctor --watch` read it (lib/node port_sampler.h): counters/,
// hw_counters/ and, on RoCE, the netdev's ethtool statistics, where mlx5 keeps the PFC pause and the
// physical port's counters. A sampler per reading, so no descriptor stays open between windows. Used by
// the monitor thread only (under its lock), never by NCCL's threads; memory is bounded by the node's
// ports and their counters.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "railscope/node/hca_filter.h"
#include "railscope/node/inventory.h"
#include "railscope/node/port_counters.h"
#include "railscope/node/sysfs.h"

namespace railscope::profiler {

inline constexpr size_t kNumCounterCategories = 7;  // node::CounterCategory Loss … Other

struct PortWindow {
  std::string device;
  int port = 0;
  std::string state;       // "ACTIVE", "DOWN", … as read at the end of the window
  int64_t speed_mbps = 0;  // at start (0 = unknown)
  std::string link_layer;  // "InfiniBand", "Ethernet"
  std::string netdev;      // RoCE: the netdev whose ethtool statistics are read; "" otherwise
  std::array<uint64_t, kNumCounterCategories> by_category{};  // indexed by node::CounterCategory
  std::vector<node::CounterDelta> deltas;                     // counters that changed
  bool reset = false;                                         // a counter went down (cleared)

  std::string name() const { return device + ":" + std::to_string(port); }
  uint64_t total(node::CounterCategory c) const { return by_category[static_cast<size_t>(c)]; }
};

struct FabricWindow {
  uint64_t start_unix_ns = 0;
  uint64_t end_unix_ns = 0;
  std::vector<PortWindow> ports;
};

// A rail found down or degraded when sampling began.
struct RailProblem {
  std::string id;      // "fabric.rail_down" or "fabric.rail_degraded"
  std::string detail;  // names the port and the figures
};

class FabricSampler {
 public:
  // Chooses the ports from the inventory and the filter, finds the rails down or degraded at start, and
  // takes the first snapshot. `sysfs_root` is where the counters are read (the inventory's root).
  void start(const node::Inventory& inventory, const node::HcaFilter& hca, const std::string& sysfs_root,
             uint64_t unix_ns);
  bool active() const { return !ports_.empty(); }
  const std::vector<RailProblem>& problems_at_start() const { return problems_; }

  // Ends the current window: deltas since its start, and the next window begins now.
  FabricWindow next_window(uint64_t unix_ns);
  // What changed since the start of the previous window (the last full window and the current part),
  // without ending anything: the fabric's state around a slow collective.
  FabricWindow recent(uint64_t unix_ns) const;

 private:
  struct Sampled {
    std::string device;
    int port = 0;
    int64_t speed_mbps = 0;
    std::string link_layer;
    std::string netdev;           // RoCE: the netdev whose ethtool statistics are read; "" otherwise
    node::PortCounters current;   // at the start of the current window
    node::PortCounters previous;  // at the start of the previous window
  };
  FabricWindow window_since(bool previous, uint64_t unix_ns, std::vector<node::PortCounters>* now) const;
  // A snapshot of every sampled port, in ports_' order.
  std::vector<node::PortCounters> snapshot() const;

  node::Sysfs sysfs_{"/sys"};
  std::vector<Sampled> ports_;
  std::vector<RailProblem> problems_;
  uint64_t window_start_ns_ = 0;
  uint64_t previous_start_ns_ = 0;
};

// One line naming what an unhealthy window shows, port by port ("packet loss on mlx5_1:1: 412
// (out_of_sequence +400, …)"; a port not ACTIVE); "" when the window is healthy (traffic and unknown
// counters alone never count).
std::string fabric_trouble(const FabricWindow& w);

}  // namespace railscope::profiler
