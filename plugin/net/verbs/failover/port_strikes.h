// SPDX-License-Identifier: Apache-2.0
// How often traffic left one port of a connection, and whether it may come back (docs/failover.md): a
// port that failed `limit` times is kept out for the connection's life and named, so that a flapping
// optic does not move traffic back and forth for ever. Between failures, a port that is ACTIVE again
// is probed before traffic returns, no sooner than `backoff` after it failed, doubled at each failure.
#pragma once

#include <chrono>
#include <cstdint>

namespace railscope::net::verbs::failover {

class PortStrikes {
 public:
  using Clock = std::chrono::steady_clock;

  PortStrikes(int limit, Clock::duration backoff) : limit_(limit < 1 ? 1 : limit), backoff_(backoff) {}
  // Traffic moved away from the port at `now`. True when that was its limit-th failure: kept out.
  bool failed(Clock::time_point now) {
    ++failures_;
    out_ = true;
    retry_at_ = now + backoff_ * (uint64_t{1} << (failures_ - 1 < 16 ? failures_ - 1 : 16));
    return kept_out();
  }
  // The probe on the port passed: traffic is back on it.
  void restored() { out_ = false; }
  bool in_use() const { return !out_; }
  bool kept_out() const { return failures_ >= limit_; }
  // Whether a port that is ACTIVE again may be probed now.
  bool may_probe(Clock::time_point now) const { return out_ && !kept_out() && now >= retry_at_; }
  int failures() const { return failures_; }

 private:
  int limit_;
  Clock::duration backoff_;
  int failures_ = 0;
  bool out_ = false;
  Clock::time_point retry_at_{};
};

}  // namespace railscope::net::verbs::failover
