// SPDX-License-Identifier: Apache-2.0
// Whether one verbs connection can still be used, and why not: its first error (once a connection
// failed, every later call reports that failure), the failed completion behind it, the generation of
// each of its ports' health when the connection opened (a port failure recorded since fails the
// connection), the rate limits of the clock-based checks (peer liveness), the stall budget of its QPs,
// and the search for a completion error's cause (a port down, a peer gone).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plugin/net/transport.h"
#include "plugin/net/verbs/watch/port_health.h"

struct ibv_wc;

namespace railscope::net::verbs {

struct Lane;    // qp_set.h
struct QpLane;  // qp_set.h

class Channel;      // oob_channel.h
struct LinkParams;  // link_params.h

class ConnectionHealth {
 public:
  using Clock = std::chrono::steady_clock;

  // The failed completion behind the error (status 0: the error was not a completion's).
  struct FailedCompletion {
    int status = 0;
    uint32_t vendor_err = 0;
    uint32_t qpn = 0;
    size_t lane = 0;
  };

  ConnectionHealth() = default;
  ConnectionHealth(const ConnectionHealth&) = delete;
  ConnectionHealth& operator=(const ConnectionHealth&) = delete;

  // The lanes' ports, each at its current generation: a failure a port records from now on is this
  // connection's.
  void watch_ports(const std::vector<Lane>& lanes);
  // No error and no port failure since watch_ports. Inline: every test() that finds nothing asks.
  bool healthy() const {
    if (!error_.ok()) return false;
    if (solo_ != nullptr) return solo_->health->generation() == solo_->generation;
    for (const auto& p : ports_)
      if (p.health->generation() != p.generation) return false;
    return true;
  }
  // The first lane whose port recorded a failure since watch_ports; null when none did.
  const PortHealth* failed_port() const;
  // The failure lane's port recorded is taken care of (its traffic moved): healthy() looks past it.
  void accept_port_failure(size_t lane) {
    if (lane < ports_.size()) ports_[lane].generation = ports_[lane].health->generation();
  }
  bool port_failed(size_t lane) const {
    return lane < ports_.size() && ports_[lane].health->generation() != ports_[lane].generation;
  }

  bool ok() const { return error_.ok(); }
  const Status& error() const { return error_; }
  // The first error rule: `st` becomes the connection's error unless it has one. True when it did.
  bool record(Status st);
  // Remembers the failed completion `wc` polled from lane `lane`'s CQ, unless the connection already
  // failed: QP numbers are unique per device, so the QP that failed is (lane, wc.qp_num).
  void note_failed_completion(size_t lane, const ibv_wc& wc);
  const FailedCompletion& failed_completion() const { return failed_; }
  // The QP the error names (a profiler error event): the failed completion's, else a QP on a port
  // that failed or went down, else the first. qps must not be empty.
  const QpLane& failed_qp(const std::vector<Lane>& lanes, const std::vector<QpLane>& qps) const;

  // One call in kClockEvery of a polling loop that found nothing reads the clock: a clock read costs
  // more than a CQ poll on hosts without a vDSO clock, and the loop is NCCL's proxy thread spinning on
  // test().
  bool clock_due() { return ++idle_calls_ % kClockEvery == 0; }
  // Whether the peer's liveness is due a check (every 100 ms); true moves the next check on.
  bool liveness_due(Clock::time_point now);
  Clock::time_point opened() const { return opened_; }

  // The ports now carry this connection (lanes with a QP): the fabric sampler watches them, and a link
  // going down is weighed against the QPs' retry budget, which is the stall budget from now on.
  void attach(std::vector<Lane>& lanes, const LinkParams& link);
  static void detach(std::vector<Lane>& lanes);
  std::chrono::microseconds stall_budget() const { return stall_budget_; }
  // progress.stalled: a `bytes`-byte send posted `waited` ago has not completed, and no send of the
  // connection completed for `idle` (≤ waited).
  Status stalled(size_t bytes, Clock::duration waited, Clock::duration idle, const std::string& where) const;

  // A completion error `st`, with its cause named first when one shows within 500 ms: a port failure or
  // link down during the connection, or a peer that closed its out-of-band channel.
  Status explain(Status st, const std::vector<Lane>& lanes, Channel& oob) const;

 private:
  struct Watched {
    const PortHealth* health = nullptr;
    uint32_t generation = 0;
  };
  std::optional<Status> port_cause(const Status& st, const std::vector<Lane>& lanes) const;
  static constexpr uint32_t kClockEvery = 16;
  Status error_;
  FailedCompletion failed_;
  uint32_t idle_calls_ = 0;
  std::vector<Watched> ports_;  // per lane
  // ports_[0] when the connection has exactly one lane (most do), else null: healthy(), on every idle
  // test(), reads one pointer rather than walk the vector.
  const Watched* solo_ = nullptr;
  Clock::time_point opened_ = Clock::now();
  Clock::time_point next_liveness_{};
  std::chrono::microseconds stall_budget_{0};
  int timeout_ = 0, retry_cnt_ = 0;  // the QPs' (stalled())
};

}  // namespace railscope::net::verbs
