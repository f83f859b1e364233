// SPDX-License-Identifier: Apache-2.0
// The connections a listener (both engines) accepted that have not proved yet that they are meant for
// it (a hello carrying the listener's nonce), and the policy that keeps anyone who can reach the port
// from shutting the real peer out:
// - each gets kUnverifiedDeadline to prove itself; a silent one is closed after it;
// - at most kMaxUnverifiedPerListener are held, kMaxUnverifiedPerSource from one address; when a new
//   connection would pass a bound, the oldest unverified connection (of its source, when the source is
//   at its bound) is read once more without blocking (its hello may just have arrived) and closed if it
//   still has not proved itself. The newest is always taken: the real peer connects after a flood
//   began, and its hello follows its connection at once;
// - accept() takes at most kMaxAcceptsPerCall connections per call, so the caller (NCCL polls accept()
//   and must not block) gets its thread back whatever the backlog.
// Refusals go to a RefusalLog (one line per source per interval). Not thread-safe: the listener's
// mutex guards it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "plugin/net/common/refusals.h"
#include "plugin/net/common/socket.h"

namespace railscope::net {

// NCCL connects one connection to a listen comm (the TCP engine: one control socket plus at most 64
// data sockets); more unverified ones than this from one address is a flood.
inline constexpr size_t kMaxUnverifiedPerSource = 128;
inline constexpr size_t kMaxUnverifiedPerListener = 256;
// A real peer sends its hello as soon as its connection is up (microseconds to milliseconds later).
inline constexpr std::chrono::seconds kUnverifiedDeadline{10};
inline constexpr size_t kMaxAcceptsPerCall = 32;

struct AdmissionLimits {
  size_t max_held = kMaxUnverifiedPerListener;
  size_t max_per_source = kMaxUnverifiedPerSource;
  std::chrono::steady_clock::duration deadline = kUnverifiedDeadline;
  size_t accepts_per_call = kMaxAcceptsPerCall;
};

// What one non-blocking step of an unverified connection found. why: the refusal's reason; for a
// verified connection, a failure of the real peer's setup (the caller returns it from accept()).
struct Verdict {
  enum class Progress { Waiting, Verified, Refused };
  Progress progress = Progress::Waiting;
  std::string_view kind;  // refusal::*, when refused
  Status why;

  static Verdict waiting() { return {}; }
  static Verdict verified(Status failure = Status::success()) {
    return {Progress::Verified, {}, std::move(failure)};
  }
  static Verdict refused(std::string_view kind, Status why) {
    return {Progress::Refused, kind, std::move(why)};
  }
};

// T: the engine's state of a connection before its hello is verified. The callables:
//   advance(T&) -> Verdict: one non-blocking step (reads what arrived, never waits);
//   on_verified(T&&, Status): the connection proved itself; it leaves this set (Status: the failure of
//   the step that verified it, success mostly).
template <class T>
class UnverifiedConnections {
 public:
  using Clock = std::chrono::steady_clock;

  UnverifiedConnections(RefusalLog* log, AdmissionLimits limits = {}) : log_(log), limits_(limits) {}

  // Accepts up to limits.accepts_per_call connections waiting on listener; make(Fd, peer) -> T.
  template <class Make, class Advance, class OnVerified>
  Status accept_from(const Fd& listener, Make&& make, Advance&& advance, OnVerified&& on_verified,
                     Clock::time_point now = Clock::now()) {
    for (size_t i = 0; i < limits_.accepts_per_call; ++i) {
      Fd fd;
      if (Status st = accept_one(listener, &fd); !st.ok()) return st;
      if (!fd) break;
      std::string source = source_of(fd.get());
      std::string peer = peer_of(fd.get());
      T conn = make(std::move(fd), peer);
      admit(std::move(source), std::move(peer), std::move(conn), advance, on_verified, now);
    }
    return Status::success();
  }

  // Takes a connection, first making room for it.
  template <class Advance, class OnVerified>
  void admit(std::string source, std::string peer, T conn, Advance&& advance, OnVerified&& on_verified,
             Clock::time_point now) {
    for (;;) {
      const size_t same = from(source);
      if (held_.size() < limits_.max_held && same < limits_.max_per_source) break;
      size_t victim = 0;
      if (same >= limits_.max_per_source)
        while (held_[victim].source != source) ++victim;
      Verdict v = advance(held_[victim].conn);  // the last chance: its hello may be in
      if (v.progress == Verdict::Progress::Waiting)
        v = Verdict::refused(refusal::kEvicted,
                             connection_flood(held_[victim].peer, log_->listener(), held_.size(), same,
                                              std::chrono::duration_cast<std::chrono::milliseconds>(
                                                  now - held_[victim].admitted)));
      settle(victim, std::move(v), on_verified, now);
    }
    held_.push_back(Held{std::move(conn), std::move(source), std::move(peer), now});
  }

  // Steps every held connection once: verified ones go to on_verified, refused ones and those past the
  // deadline are closed (and logged).
  template <class Advance, class OnVerified>
  void advance_all(Advance&& advance, OnVerified&& on_verified, Clock::time_point now = Clock::now()) {
    for (size_t i = 0; i < held_.size();) {
      Verdict v = advance(held_[i].conn);
      if (v.progress == Verdict::Progress::Waiting) {
        if (now - held_[i].admitted < limits_.deadline) {
          ++i;
          continue;
        }
        v = Verdict::refused(
            refusal::kSilent,
            Status::fail(
                ncclRemoteError, "peer.bad_handshake",
                fmt::format("{} sent no valid hello within {} s of connecting", held_[i].peer,
                            std::chrono::duration_cast<std::chrono::seconds>(limits_.deadline).count())));
      }
      settle(i, std::move(v), on_verified, now);
    }
    log_->flush(now);
  }

  size_t size() const { return held_.size(); }
  size_t from(const std::string& source) const {
    return static_cast<size_t>(
        std::count_if(held_.begin(), held_.end(), [&](const Held& h) { return h.source == source; }));
  }

 private:
  struct Held {
    T conn;
    std::string source;  // the peer's address without port
    std::string peer;
    Clock::time_point admitted;
  };

  // Removes held_[i] (not waiting any more) and hands it on or logs its refusal.
  template <class OnVerified>
  void settle(size_t i, Verdict v, OnVerified& on_verified, Clock::time_point now) {
    Held h = std::move(held_[i]);
    held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(i));
    if (v.progress == Verdict::Progress::Verified)
      on_verified(std::move(h.conn), std::move(v.why));
    else
      log_->note(h.source, v.kind, v.why, now);
  }

  RefusalLog* log_;
  AdmissionLimits limits_;
  std::vector<Held> held_;  // oldest first
};

}  // namespace railscope::net
