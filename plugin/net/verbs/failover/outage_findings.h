// SPDX-License-Identifier: Apache-2.0
// Which of a process's connections says at WARN that traffic left one port, or came back to it
// (docs/failover.md, "Findings"). NCCL opens many connections over one NIC (channels times peers), and
// each one moves its own traffic: a port that fails would otherwise print as many warnings as there are
// connections on it, in every process of the node. One warning per port and outage says what an operator
// acts on; the other connections say the same at INFO, with their own figures.
//  - link.failover: the first connection of an outage warns. An outage is new when the port's link went
//    down again since the last warning (later than kLinkEventLag after it: a connection whose writes
//    fail can move before the port's own event is read), or when the last warning is kOutageSpan old (a
//    port that fails without going down here, its peer's end failing, shows no link event of its own).
//  - link.recovered: one warning per port and outage too. After a warned failover it is the first of
//    these to happen: a connection's traffic comes back to the port, or the port watcher sees the port
//    ACTIVE and receiving again (watch/fabric_watch.h); the other says it at INFO. An outage no
//    connection moved for (a flap the retransmissions rode out) has only the watcher's, a warning.
// A port's PortHealth (watch/port_health.h) holds one, under its lock.
#pragma once

#include <chrono>

namespace railscope::net::verbs::failover {

// Connections reach their retry budget, and so fail over, within seconds of each other; a second failure
// of the port later than this is a new outage even without a link event.
inline constexpr std::chrono::seconds kOutageSpan{60};
// How much later than a connection's failover the port's own link-down event may be read (the async
// event thread reads it within milliseconds; a port that comes back is probed no sooner than 1 s after).
inline constexpr std::chrono::seconds kLinkEventLag{2};

class OutageFindings {
 public:
  using Clock = std::chrono::steady_clock;

  // A connection moves its traffic off the port at `now`; `last_down` is when the port's link last went
  // down here (the clock's epoch when never). True: this connection's link.failover is the outage's
  // warning.
  bool first_failover(Clock::time_point now, Clock::time_point last_down) {
    const bool first = !warned_ || last_down > warned_at_ + kLinkEventLag || now - warned_at_ >= kOutageSpan;
    if (first) {
      warned_ = true;
      warned_at_ = now;
      recovery_ = Recovery::kPending;
    }
    return first;
  }
  // A connection's traffic is back on the port. True: this connection's link.recovered is the warning.
  bool first_recovery() {
    if (recovery_ != Recovery::kPending) return false;
    recovery_ = Recovery::kTold;
    return true;
  }
  // The port watcher saw the port back from an outage. True: its link.recovered is the warning.
  bool port_recovery() {
    if (recovery_ == Recovery::kTold) return false;
    recovery_ = Recovery::kTold;
    return true;
  }
  // The port's link went down: a recovery already told belongs to an earlier outage. A failover still
  // waiting for its recovery keeps waiting (the link event may be read after the failover).
  void link_went_down() {
    if (recovery_ == Recovery::kTold) recovery_ = Recovery::kNone;
  }

 private:
  // kNone: no failover warned since the port's last recovery; kPending: one was, its recovery is not
  // told; kTold: the outage's recovery was told at WARN.
  enum class Recovery { kNone, kPending, kTold };
  bool warned_ = false;
  Clock::time_point warned_at_{};
  Recovery recovery_ = Recovery::kNone;
};

}  // namespace railscope::net::verbs::failover
