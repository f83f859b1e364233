// SPDX-License-Identifier: Apache-2.0
// Rank 0's side of the exchanges with the other ranks, with a bounded number of open files whatever the
// world size. Every exchange is one connection: the rank connects, sends one frame (its report, a step's
// results, or a poll) and waits for its next message (a link step or the verdict). When that message is
// not ready yet, rank 0 holds the connection open, up to max_held of them; beyond, it answers "come back
// in N ms" (FrameType::Later) and closes, and the rank polls again. Ranks held get their message the
// moment it is ready; the others within one come-back interval.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frame_auth.h"
#include "rendezvous.h"

namespace railscope::preflight {

// Connections rank 0 holds open at most, beside its own descriptors (open_files.h).
constexpr size_t kMaxHeldCallers = 512;

// One accepted connection: its first frame from the peer, or why there is none.
struct Caller {
  Fd fd;
  FrameAuth auth;
  std::optional<Frame> frame;  // nullopt: the peer failed the hellos or sent no valid frame (error)
  std::string peer;            // "ADDR:PORT"
  std::string error;
};

class Desk {
 public:
  // come_back_ms: what a caller that is not held is told to wait before it polls again.
  Desk(int listen_fd, JobSecret key, size_t max_held, int come_back_ms);

  // The next connection, accepted until `accept_by`, its hellos and first frame read within 10 s (and
  // `until`); nullopt when none came by accept_by.
  std::optional<Caller> next(Clock::time_point accept_by, Clock::time_point until);
  // Sends one frame to the caller and closes its connection; false with *error.
  static bool answer(Caller& c, FrameType type, const std::string& payload, std::string* error);
  // Keeps the caller's connection until release() takes it (a second call of one rank replaces its first),
  // or, with max_held connections held, tells it to come back later and closes it.
  void hold_or_defer(int rank, Caller&& c);
  // The held callers whose rank `ready` says yes to, taken out of the desk (their connections are the
  // caller's to answer).
  std::vector<std::pair<int, Caller>> release(const std::function<bool(int rank)>& ready);

  size_t held() const { return held_.size(); }
  size_t peak_held() const { return peak_held_; }
  size_t deferred() const { return deferred_; }
  size_t closed_for_want_of_files() const { return spare_.closed; }
  int come_back_ms() const { return come_back_ms_; }

 private:
  int listen_fd_;
  JobSecret key_;
  size_t max_held_;
  int come_back_ms_;
  SpareFd spare_;
  std::map<int, Caller> held_;
  size_t peak_held_ = 0;
  size_t deferred_ = 0;
};

// The come-back interval for `waiting` callers that cannot be held: 250 ms plus 1 ms per caller, at most
// 5 s, so the polls reaching rank 0 stay near 1,000 a second whatever the world size.
int come_back_ms_for(size_t waiting);

// The wait a Later frame's payload asks for, in ms: 10..10,000 (a malformed payload: 1,000).
int come_back_ms_from(const std::string& payload);

}  // namespace railscope::preflight
