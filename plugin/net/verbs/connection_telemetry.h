// SPDX-License-Identifier: Apache-2.0
// What one verbs connection reports about itself: its statistics (counters, the JSON stats lines of
// RAILSCOPE_NET_STATS, periodic and final, with its ports' counter deltas and rates), the profiler's QP
// events of its messages and its error event, and each large send's share of its ports' rates
// (rail_rate.h). Reads the lanes and QPs it is given; owns none.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "plugin/net/common/stats.h"
#include "plugin/net/verbs/qp_events.h"
#include "plugin/net/verbs/watch/port_health.h"
#include "railscope/nccl/net.h"

namespace railscope::net::verbs {

struct Lane;    // qp_set.h
struct QpLane;  // qp_set.h

class ConnectionTelemetry {
 public:
  using Clock = std::chrono::steady_clock;

  // `requests`: the comm's request slots that can carry QP events.
  explicit ConnectionTelemetry(size_t requests) { qp_events_.set_requests(requests); }
  ConnectionTelemetry(const ConnectionTelemetry&) = delete;
  ConnectionTelemetry& operator=(const ConnectionTelemetry&) = delete;

  ConnStats& stats() { return stats_; }
  const ConnStats& stats() const { return stats_; }
  // RAILSCOPE_NET_STATS is set (once connected): its lines carry the receives' latency histogram, the
  // one use of a receive's two clock reads, which are spared otherwise.
  bool stats_on() const { return stats_on_; }

  // The connection is up: each lane's port totals and rates from now on are this connection's, and
  // the periodic stats lines start (RAILSCOPE_NET_STATS_INTERVAL).
  void start(const std::vector<Lane>& lanes);
  // Whether a periodic stats line is due at `now` and the connection did something since the last
  // (idle connections write nothing). One comparison while none is due.
  bool line_due(Clock::time_point now) {
    if (now < next_stats_) return false;
    next_stats_ = now + stats_period_;
    return stats_seen_.moved(stats_);
  }
  // One stats line for `who` (its identity filled in by the caller), with the attached lanes'
  // counter deltas since start() and rates since the previous line.
  void emit(ConnIdentity who, const std::vector<Lane>& lanes);

  // A send of `bytes` posted at `start` and seen done at `end`: a large one adds to the rate of the
  // ports it used (each lane its share of the bytes). Lock-free, no clock read.
  static void record_transfer(const std::vector<Lane>& lanes, size_t bytes, Clock::time_point start,
                              Clock::time_point end);
  // The same part by part, for a connection striped over several lanes: a large send of `bytes` posted
  // at `posted_at` whose parts on lane l (chunk_of over the QPs, QP q on qps[q].lane) completed at
  // lane_done[l] adds to each port its parts' bytes over [posted_at, lane_done[l]], so a slow port of
  // a striped connection shows its own rate. Lock-free, no clock read.
  static void record_parts(const std::vector<Lane>& lanes, const std::vector<QpLane>& qps, size_t bytes,
                           Clock::time_point posted_at, const Clock::time_point* lane_done);

  void set_profiler(ncclProfilerCallback_t profiler) { profiler_ = profiler; }
  bool profiler_on() const { return profiler_ != nullptr; }
  // QP events of request slot `request` (Connection::profile_start says which). Inline: without a
  // profiler (most runs) the call is the comparison.
  void profile_start(const std::vector<Lane>& lanes, const std::vector<QpLane>& qps, size_t request,
                     void* phandle, int opcode, uint64_t seq, size_t size, bool whole) {
    if (profiler_ != nullptr && phandle != nullptr)
      profile_start_events(lanes, qps, request, phandle, opcode, seq, size, whole);
  }
  // Ends the request slot's QP events. Inline: without a profiler, or with NCCL's callback but no
  // event ever started (no parent handle: net events off), the call is two comparisons.
  void profile_stop(size_t request, size_t nqps) {
    if (profiler_ != nullptr && qp_events_.allocated()) profile_stop_events(request, nqps);
  }
  bool profiling(size_t request) const { return qp_events_.live(request); }
  // The error event of a failed connection under `phandle`: RailscopeNetQp_v1 naming `failed` (QP and
  // device) and `bytes`, then UpdateAndStop with the completion's status and vendor error (status 0:
  // not a completion's, reported as IBV_WC_GENERAL_ERR) and the diagnosis id.
  void failure_event(void* phandle, const QpLane& failed, size_t bytes, int status, uint32_t vendor_err,
                     const char* diag_id);

 private:
  struct LaneMarks {
    CategoryTotals totals_at_start{};            // the port's counter totals at start()
    RailRateAccumulator::Totals rate_at_line{};  // its rate totals at the previous stats line
  };
  void profile_start_events(const std::vector<Lane>& lanes, const std::vector<QpLane>& qps, size_t request,
                            void* phandle, int opcode, uint64_t seq, size_t size, bool whole);
  void profile_stop_events(size_t request, size_t nqps);
  // Once per connection, before its first QP events: one railscope NetPlugin event per lane naming the
  // port, its rate and whether NCCL stages its traffic through host memory (RailscopeNetPort_v1), what
  // the profiler's expected busbw and its GPUDirect evidence come from (docs/profiler.md).
  void announce_ports(const std::vector<Lane>& lanes, void* phandle);

  ConnStats stats_;
  bool stats_on_ = false;
  bool ports_announced_ = false;
  ncclProfilerCallback_t profiler_ = nullptr;
  QpEvents qp_events_;
  std::vector<LaneMarks> marks_;                             // per lane, from start()
  Clock::time_point next_stats_ = Clock::time_point::max();  // periodic stats line; max = never
  std::chrono::seconds stats_period_{0};
  StatsChange stats_seen_;  // what the last periodic line showed
};

}  // namespace railscope::net::verbs
