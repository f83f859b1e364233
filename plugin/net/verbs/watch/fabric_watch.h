// SPDX-License-Identifier: Apache-2.0
// The fabric sampler: one helper thread per verbs engine that, once a second, reads the counters of
// the ports connections use (lib/node read_port_counters: counters/ and hw_counters/ through the
// sysfs root) and their active MTU (ibv_query_port), and logs what a window says:
//  - fabric.* findings (railscope/node/fabric_findings.h), one WARN per port and kind per process;
//  - [mtu.changed] when a port's active MTU fell below the path MTU its QPs were set up with (every
//    larger packet is then dropped: named at once, not after the retry budget);
//  - [link.recovered] once a port that went down (async_events.h) is ACTIVE again and receives
//    (also when the traffic that says so is the last before the port's connections close);
//  - [fabric.rail_skew] when one used port's large transfers run well below the other ports' rate
//    (railscope/node/rail_skew.h), once per episode (windows in a row that show it); each window's
//    rates at INFO. The other ports are this process's and, through the node's rail board
//    (railscope/node/rail_board.h, RAILSCOPE_NET_RAIL_BOARD), the other processes' of this user on
//    the node: of the processes that see a slow port, the one that sends on it names it.
// It adds category totals to PortHealth, from which each connection's stats line takes its deltas.
//
// Why a thread and not the progress path: a sample reads a few dozen sysfs files (tens to hundreds of
// microseconds), which in test() would be a latency spike on NCCL's proxy thread; one reader per
// process serves every connection on a port, whichever thread drives it; and the sampler keeps
// watching when the data path is stuck — a hang is when the figures matter. The data path gains no
// instruction from it. The thread sleeps without a timeout while no connection uses a port (no work
// in an idle process), wakes when one attaches, and is stopped and joined when the engine finalizes.
// RAILSCOPE_NET_FABRIC_SAMPLING=0 turns it off. After each tick it rewrites the Prometheus textfile
// when RAILSCOPE_NET_PROM asks for one (net_prom.h).
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "railscope/node/node_rail_skew.h"
#include "railscope/node/port_counters.h"
#include "railscope/node/rail_board.h"

namespace railscope::node {
class Sysfs;
class EthtoolSource;
}  // namespace railscope::node

namespace railscope::net::verbs {

struct NetPort;
class PortHealth;
class NetPromFile;

class FabricWatch {
 public:
  // health[i] belongs to ports[i]; both outlive this object. Starts the thread.
  FabricWatch(const std::vector<NetPort>& ports, std::vector<std::unique_ptr<PortHealth>>& health);
  ~FabricWatch();  // stops and joins the thread
  FabricWatch(const FabricWatch&) = delete;
  FabricWatch& operator=(const FabricWatch&) = delete;

  // Whether RAILSCOPE_NET_FABRIC_SAMPLING allows sampling.
  static bool enabled();

 private:
  struct Port;
  void run();
  void wake();
  void judge_rates(std::chrono::steady_clock::time_point now);
  void judge_recovery(Port& p, const std::vector<node::CounterDelta>& tick, bool counts_traffic,
                      std::chrono::steady_clock::duration over);
  void conclude_recovery(Port& p, const node::Sysfs& sysfs, node::EthtoolSource* ethtool);
  static bool recovery_pending(Port& p);
  static node::PortCounters sample(const Port& p, const node::Sysfs& sysfs, node::EthtoolSource* ethtool);
  std::vector<std::unique_ptr<Port>> ports_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool woken_ = false;
  std::thread thread_;
  // Rate window (the sampler thread only).
  std::chrono::steady_clock::time_point rate_at_ = std::chrono::steady_clock::now();
  bool skew_in_window_ = false;
  bool skew_episode_ = false;
  // The node's rail board (railscope/node/rail_board.h): opened at the first judgement with large
  // sends, when RAILSCOPE_NET_RAIL_BOARD=1 (off by default); a refused board is logged once and not retried.
  node::RailBoard::Identity me_ = node::RailBoard::this_process();
  std::unique_ptr<node::RailBoard> board_;
  bool board_tried_ = false;
  bool board_logged_ = false;  // one INFO line about the board's problems per process
  node::NodeRailWindow rail_window_;
  std::unique_ptr<NetPromFile> prom_;  // RAILSCOPE_NET_PROM's textfile (net_prom.h); null when off
};

}  // namespace railscope::net::verbs
