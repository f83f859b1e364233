// SPDX-License-Identifier: Apache-2.0
// The sending end's recovery of a port its traffic left (docs/failover.md, "Recovery and keep-out"), the
// same for both protocols: each port's failures and backoff (port_strikes.h), and the probe of a port
// that is ACTIVE again. PROBE asks the receiver to restart its QPs of the port; once it answered, a
// signalled zero-byte RDMA write on each QP tests the path both ways. What a passed probe changes (where
// new messages' parts go, what the receiver is told) is the protocol's.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "plugin/net/verbs/connection.h"
#include "plugin/net/verbs/failover/port_strikes.h"

namespace railscope::net::verbs::failover {

class PortProbe {
 public:
  using Clock = Connection::Clock;
  explicit PortProbe(Connection& c) : c_(c) {}

  // Failures. Traffic left the ports of `mask` at `now`: each counts a failure; true when one of them is
  // now kept out.
  bool left(uint64_t mask, Clock::time_point now);
  // A failure of each port of `mask` (a probe that did not pass); true as for left.
  bool strike(uint64_t mask, Clock::time_point now);
  // The failures so far of the port of QP q.
  int failures(size_t q) const;
  // Seconds since the traffic left the port of QP q.
  double seconds_out(size_t q, Clock::time_point now) const;

  // The probe. Where it stands: kNone, kAwaitingAnswer (QPs restarted here, PROBE sent), kProbing (the
  // receiver restarted its own; the writes are in flight).
  enum class Step : uint8_t { kNone, kAwaitingAnswer, kProbing };
  Step step() const { return step_; }
  // The QPs the probe in progress is about.
  uint64_t qps() const { return qps_; }
  // Of the `failed` QPs, those whose port is ACTIVE again and may be tried are restarted and PROBE
  // (epoch *epoch + 1) sent. Nothing is due: nothing happens. A port whose QPs cannot restart counts a
  // failure.
  void start(uint64_t failed, uint32_t* epoch, Clock::time_point now);
  // kAwaitingAnswer: the receiver's answer (the same PROBE), then the writes; both steps: the deadline.
  // *passed when the probe ended well (every write completed); a probe given up says why in its log line
  // and counts a failure. `failed`: the QPs out of traffic, for the log line.
  Status progress(uint32_t epoch, uint64_t failed, bool* passed);
  // A probe write's completion (wr_id kWrProbe | q), `ok` or in error. *passed as for progress.
  Status on_write_done(size_t q, bool ok, uint64_t failed, bool* passed);
  // The probe passed and its QPs carry traffic again: their ports' strikes say so, and it ends.
  void restored();
  // The probe is given up (its QPs stop again; their ports count a failure). True when a port of it is
  // now kept out; the log line (a warning then, else INFO) says `why`.
  bool give_up(const char* why, uint64_t failed);

 private:
  Connection& c_;
  std::vector<PortStrikes> strikes_;  // per local lane
  std::array<Clock::time_point, kMaxDevsPerEnd> out_since_{};
  Step step_ = Step::kNone;
  uint64_t qps_ = 0;
  uint64_t writes_left_ = 0;  // kProbing: QPs whose probe write has not completed
  bool writes_ok_ = true;     // kProbing: no probe write failed
  Clock::time_point deadline_{};
};

}  // namespace railscope::net::verbs::failover
