// SPDX-License-Identifier: Apache-2.0
// What the verbs engine knows about one port while the job runs, shared by every connection on it,
// the async-event thread (async_events.h) and the fabric sampler (fabric_watch.h):
//  - failure: a finding that ends every connection on the port (device fatal, or a link down for
//    longer than the retransmission budget). Connections compare the generation in test() (one
//    atomic load) and fail with the recorded finding.
//  - link state: down since when (IBV_EVENT_PORT_ERR), back since when (IBV_EVENT_PORT_ACTIVE). A
//    link that goes down does not fail the connections by itself: the QPs retransmit for
//    timeout x retries (InfiniBand Architecture Specification vol. 1, 9.7.6.1.3 "transport timer";
//    ibv_modify_qp(3): timeout, retry_cnt), as NCCL's own IB transport lets them.
//  - use: how many connections use the port, how many of them move their traffic off it when it fails
//    (failover), the largest path MTU their QPs were set up with and the longest retransmission budget
//    among them (what the sampler compares against).
//  - counter totals by category since the sampler first read the port (per-connection statistics
//    take differences of these);
//  - the rate of its large transfers (rail_rate.h), added by every connection at completion, judged
//    across ports by the sampler (fabric.rail_skew);
//  - which connection's link.failover and link.recovered speak at WARN for an outage
//    (failover/outage_findings.h).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "plugin/net/verbs/failover/outage_findings.h"
#include "plugin/net/verbs/watch/rail_rate.h"
#include "railscope/core/diagnosis.h"

namespace railscope::net::verbs {

// node::CounterCategory has 7 values (loss, congestion, pause, link, discard, traffic, other).
inline constexpr size_t kCounterCategories = 7;
using CategoryTotals = std::array<uint64_t, kCounterCategories>;

// The wall-clock time of day, "01:02:03.456 UTC", for lines a reader compares with other logs.
std::string wall_clock_now();

class PortHealth {
 public:
  using Clock = std::chrono::steady_clock;

  // Failure of the whole port.
  uint32_t generation() const { return generation_.load(std::memory_order_acquire); }
  void fail(diag::Finding f);
  diag::Finding last() const;

  // Link state (written by the async-event thread). link_down returns false when it was down already.
  bool link_down(Clock::time_point at);
  // Returns how long it was down (zero when it was not down).
  Clock::duration link_up(Clock::time_point at);
  bool is_down() const { return down_since_ns_.load(std::memory_order_acquire) != 0; }
  Clock::time_point down_since() const;
  // The last time the link went down (epoch when never), and the wall-clock text of that moment.
  Clock::time_point last_down() const;
  // Whether the link is down now or came back less than `d` before `now`.
  bool down_within(Clock::time_point now, Clock::duration d) const;
  std::string last_down_text() const;
  // True once per outage (the first call while the link is down): the outage fails the port once.
  bool first_failure_of_outage();
  // Set by link_up, taken (once) by the sampler to log [link.recovered] when traffic flows again.
  bool take_recovered(Clock::duration* down_for);

  // Use by connections (attach after the QPs are connected, detach at close).
  void attach(int path_mtu, int timeout, int retry_cnt, std::chrono::microseconds budget);
  void detach();
  // Called (outside any lock of this object) when the first connection attaches; empty = none.
  void set_attach_hook(std::function<void()> hook);
  int users() const { return users_.load(std::memory_order_acquire); }
  // Of the users, those that move their traffic to other ports when this one fails (docs/failover.md):
  // counted by each such connection after attach, uncounted before detach.
  void attach_movable() { movable_users_.fetch_add(1, std::memory_order_acq_rel); }
  void detach_movable() { movable_users_.fetch_sub(1, std::memory_order_acq_rel); }
  int movable_users() const { return movable_users_.load(std::memory_order_acquire); }
  int path_mtu() const { return path_mtu_.load(std::memory_order_acquire); }
  // The longest budget among the connections (and its timeout/retry_cnt); zero when none attached.
  std::chrono::microseconds budget(int* timeout, int* retry_cnt) const;

  // Counter totals by category (written by the sampler, read when a connection writes its stats).
  void add_totals(const CategoryTotals& delta);
  CategoryTotals totals() const;

  // A connection moved its traffic off the port, or back onto it: whether its finding is the one this
  // process logs at WARN for the outage (failover::OutageFindings).
  bool first_failover_finding(Clock::time_point now);
  bool first_recovery_finding();
  // The port watcher saw the port ACTIVE (and receiving) again: whether its link.recovered is the WARN.
  bool port_recovery_finding();

  // Large transfers' bytes and busy time (data path: lock-free; rail_rate.h).
  RailRateAccumulator& rail_rate() { return rail_rate_; }
  const RailRateAccumulator& rail_rate() const { return rail_rate_; }

 private:
  std::atomic<uint32_t> generation_{0};
  mutable std::mutex mutex_;  // last_, down text, budget fields, outage findings
  diag::Finding last_;
  std::atomic<int64_t> down_since_ns_{0};  // steady clock; 0 = up
  std::atomic<int64_t> last_down_ns_{0};
  std::atomic<int64_t> failed_outage_ns_{0};
  std::atomic<int64_t> last_up_ns_{0};  // when the last outage ended
  std::string last_down_text_;
  bool recovered_ = false;
  Clock::duration recovered_after_{};
  std::atomic<int> users_{0};
  std::atomic<int> movable_users_{0};
  std::function<void()> attach_hook_;
  std::atomic<int> path_mtu_{0};
  std::chrono::microseconds budget_{0};
  int timeout_ = 0, retry_cnt_ = 0;
  failover::OutageFindings outage_findings_;
  std::array<std::atomic<uint64_t>, kCounterCategories> totals_{};
  RailRateAccumulator rail_rate_;
};

}  // namespace railscope::net::verbs
