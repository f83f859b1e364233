// SPDX-License-Identifier: Apache-2.0
// Failover of the eager protocol across the ports of a virtual NIC (docs/failover.md): the sender moves
// the traffic of a failed port's QPs to the connection's other QPs, the receiver says what of it
// arrived, and the sender writes again what did not. Off the data path: this runs on a completion in
// error, a port failure, and the out-of-band notices.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <thread>

#include "plugin/net/verbs/eager/eager_protocol.h"
#include "plugin/net/verbs/failover/connection_notices.h"
#include "plugin/net/verbs/failover/failover_policy.h"
#include "plugin/net/verbs/failover/part_ledger.h"
#include "plugin/net/verbs/failover/replay_plan.h"
#include "plugin/net/verbs/watch/diagnosis_map.h"
#include "plugin/net/verbs/watch/port_health.h"
#include "railscope/core/diagnosis.h"
#include "railscope/core/log.h"
#include "railscope/ibv/ibv.h"

namespace railscope::net::verbs {
namespace {
using Clock = Connection::Clock;
using failover::bad_notice;
using failover::first_qp;
using failover::log_port_finding;
using failover::next_notice;
using failover::PortNews;
using failover::send_notice;
}  // namespace

// --- sender

bool EagerSend::on_port_lost(size_t lane) {
  const uint64_t mask = c_.lane_qps(lane);
  if (mask != 0 && (mask & ~failed_qps_) == 0) return true;  // moved already
  return start_failover(mask, "down past the QPs' retry budget");
}

bool EagerSend::failover_absorbs(const ibv_wc& wc) {
  if (!c_.can_fail_over()) return false;
  const uint64_t kind = wc.wr_id & kWrKindMask, low = wc.wr_id & ~kWrKindMask;
  if (kind == kWrProbe) return on_probe_done(low, false).ok();
  uint64_t path = 0;
  const size_t q = failover::completion_path(c_, wc, &path);
  if (q >= c_.qps().size()) return false;
  if ((failed_qps_ >> q & 1) == 0 && !start_failover(path, ibv::wc_status_text(wc.status))) return false;
  // A work request of a QP whose traffic moved: flushed (or failed) with it.
  if (kind != kWrSend || low >= c_.pool().capacity()) return false;
  SendReq& r = c_.pool().at(low);
  if (r.pending > 0 && --r.pending == 0) mailbox_used_ &= ~(uint64_t{1} << r.mailbox);
  return true;
}

bool EagerSend::start_failover(uint64_t mask, const std::string& cause) {
  const size_t nqps = c_.qps().size();
  mask &= ~failed_qps_;
  if (mask == 0) return true;  // moved already
  // A failure while MOVE or PROBE waits for its answer is one exchange too many: the connection fails.
  if (!c_.can_fail_over() || awaiting_held_ || probe_.step() == failover::PortProbe::Step::kAwaitingAnswer ||
      !failover::movable(failed_qps_ | mask, nqps))
    return false;
  if (probe_.step() == failover::PortProbe::Step::kProbing)
    probe_.give_up("another port of the connection failed during the probe", failed_qps_);
  if (!c_.stop_qps(mask).ok()) return false;
  const auto now = Clock::now();
  const bool kept_out = probe_.left(mask, now);
  failed_qps_ |= mask;
  exchange_qps_ = mask;
  ++epoch_;
  exchange_ = Exchange::kDraining;
  awaiting_held_ = true;
  moved_ = 0;
  // Every large message in flight is held (one more pending) until the receiver's HELD says what of it
  // arrived: until then it waits on the exchange's budget, not on its stall budget.
  exchange_since_ = now;
  for (size_t i = 0; i < c_.pool().capacity(); ++i)
    if (SendReq& r = c_.pool().at(i); r.data_live) {
      ++r.pending;
      ++moved_;
    }
  const int failures = probe_.failures(first_qp(mask));
  log_port_finding(c_, first_qp(mask), PortNews::kFailover, "link.failover",
                   failover::moved_off_text(c_, mask, failed_qps_, cause, moved_, "large message(s)") +
                       failover::failures_text(kept_out, failures));
  return true;
}

Status EagerSend::failover_progress() {
  if (awaiting_held_)
    if (Status st = failover::exchange_check(
            c_, exchange_since_, Clock::now(),
            exchange_ == Exchange::kDraining ? "the completion here of every part posted before the failure"
                                             : "the receiver's HELD");
        !st.ok())
      return st;
  switch (exchange_) {
    case Exchange::kDraining: return send_move_when_drained();
    case Exchange::kAwaitingHeld: return poll_held();
    case Exchange::kProbe: return probe_progress();
    case Exchange::kNone: break;
  }
  return Status::success();
}

Status EagerSend::send_move_when_drained() {
  if (Status st = c_.poll(); !st.ok()) return st;
  for (size_t i = 0; i < c_.pool().capacity(); ++i)
    if (const SendReq& r = c_.pool().at(i); r.data_live && r.pending > 1) return Status::success();
  // Every part posted before the failure completed here: on a live QP it was acknowledged, so the
  // receiver has its completion, and on a stopped one it flushed. The receiver's HELD then names all
  // that arrived, and every part it lacks can go again without a copy still in flight.
  send_notice(c_, failover::Notice{failover::Kind::Move, epoch_, exchange_qps_, 0, {}});
  exchange_ = Exchange::kAwaitingHeld;
  return Status::success();
}

Status EagerSend::poll_held() {
  std::optional<failover::Notice> n;
  if (Status st = next_notice(c_, epoch_, "HELD", &n); !st.ok()) return c_.fail(std::move(st));
  if (!n) return Status::success();
  const size_t nqps = c_.qps().size();
  if (n->kind != failover::Kind::Held || n->epoch != epoch_ || n->qps != exchange_qps_ ||
      n->next_seq > ring_.posted() + 1)
    return c_.fail(bad_notice(fmt::format(
        "failover notice kind {} epoch {} QPs {:#x} ring message {} when HELD of "
        "epoch {} for QPs {:#x} was due on {}",
        static_cast<int>(n->kind), n->epoch, n->qps, n->next_seq, epoch_, exchange_qps_, c_.where())));
  std::vector<failover::InFlight> in_flight;
  for (size_t i = 0; i < c_.pool().capacity(); ++i) {
    const SendReq& r = c_.pool().at(i);
    if (r.data_live) in_flight.push_back({static_cast<uint16_t>(r.target), r.cts_seq, nqps});
  }
  const std::vector<failover::Replay> replays = failover::plan_replays(in_flight, *n, failed_qps_, nqps);
  const auto now = Clock::now();
  for (const failover::Replay& p : replays) {
    for (size_t i = 0; i < c_.pool().capacity(); ++i) {
      SendReq& r = c_.pool().at(i);
      if (!r.data_live || r.target != p.target) continue;
      const auto held =
          std::lower_bound(n->held.begin(), n->held.end(), p.target,
                           [](const failover::PartsHeld& h, uint16_t t) { return h.target < t; });
      if (held == n->held.end() || held->seq != r.cts_seq) continue;
      if (Status st =
              post_part(&r, p.part, p.on_qp, failover::replay_immediate(eager::kImmData, p.target, p.part));
          !st.ok())
        return c_.fail(std::move(st));
      r.posted_at = now;  // its stall budget starts again
      break;
    }
  }
  for (size_t i = 0; i < c_.pool().capacity(); ++i) {
    SendReq& r = c_.pool().at(i);
    if (r.data_live && r.pending > 0 && --r.pending == 0) mailbox_used_ &= ~(uint64_t{1} << r.mailbox);
  }
  awaiting_held_ = false;
  exchange_ = Exchange::kNone;
  RS_INFO(NCCL_NET,
          "NET/railscope : failover of {}: the receiver holds what arrived; {} part(s) of {} message(s) sent "
          "again on {}",
          c_.where(), replays.size(), moved_, c_.live_ports(failed_qps_));
  return Status::success();
}

Status EagerSend::poll_notices() {
  if (exchange_ != Exchange::kNone) return failover_progress();
  if (failed_qps_ == 0) return Status::success();
  probe_.start(failed_qps_, &epoch_, Clock::now());
  if (probe_.step() != failover::PortProbe::Step::kNone) exchange_ = Exchange::kProbe;
  return Status::success();
}

Status EagerSend::probe_progress() {
  bool passed = false;
  if (Status st = probe_.progress(epoch_, failed_qps_, &passed); !st.ok()) return st;
  return probe_ended(passed);
}

Status EagerSend::on_probe_done(size_t q, bool ok) {
  bool passed = false;
  if (Status st = probe_.on_write_done(q, ok, failed_qps_, &passed); !st.ok()) return st;
  return probe_ended(passed);
}

Status EagerSend::probe_ended(bool passed) {
  if (passed) {
    // Every probe write completed: new messages' parts go on the QPs again.
    const uint64_t mask = probe_.qps();
    const double out_for = probe_.seconds_out(first_qp(mask), Clock::now());
    failed_qps_ &= ~mask;
    probe_.restored();
    c_.ports_restored(mask);
    send_notice(c_, failover::Notice{failover::Kind::Restored, epoch_, mask, 0, {}});
    failover::log_sender_recovered(c_, mask, out_for, failed_qps_);
  }
  if (probe_.step() == failover::PortProbe::Step::kNone && exchange_ == Exchange::kProbe)
    exchange_ = Exchange::kNone;
  return Status::success();
}

// --- receiver

bool EagerRecv::on_port_lost(size_t lane) {
  // The sender moves the traffic (its MOVE comes): this end only has to outlive its port.
  return failover::movable(c_.lane_qps(lane) | failed_qps_, c_.qps().size());
}

Status EagerRecv::on_failed_completion(const ibv_wc& wc) {
  const uint64_t kind = wc.wr_id & kWrKindMask, low = wc.wr_id & ~kWrKindMask;
  if (kind == kWrRecv && low < failover::kMaxQps && (failed_qps_ >> low & 1) != 0) {
    flushed_ |= uint64_t{1} << low;
    return Status::success();
  }
  return Status::fail(ncclRemoteError, wc_finding(wc.status, wc.vendor_err,
                                                  kind == kWrCts ? Phase::Cts : Phase::Recv, 0, c_.where()));
}

Status EagerRecv::poll_notices() {
  for (;;) {
    std::optional<failover::Notice> n;
    if (Status st = failover::next_sender_notice(c_, &n); !st.ok() || !n) return st;
    if (Status st = on_notice(*n); !st.ok()) return st;
  }
}

Status EagerRecv::on_notice(const failover::Notice& n) {
  switch (n.kind) {
    case failover::Kind::Move: return on_move(n);
    case failover::Kind::Probe: return on_probe(n);
    case failover::Kind::Restored: return on_restored(n);
    case failover::Kind::Held: break;
  }
  return bad_notice(fmt::format("failover notice kind {} epoch {} from the sender on {}",
                                static_cast<int>(n.kind), n.epoch, c_.where()));
}

Status EagerRecv::on_move(const failover::Notice& n) {
  const size_t nqps = c_.qps().size();
  if (n.epoch != epoch_ + 1 || (n.qps & failed_qps_) != 0 || !failover::movable(n.qps | failed_qps_, nqps))
    return bad_notice(
        fmt::format("failover notice kind {} epoch {} QPs {:#x} when MOVE of epoch {} was due, "
                    "leaving the ring's QP and naming none moved already ({:#x}), on {}",
                    static_cast<int>(n.kind), n.epoch, n.qps, epoch_ + 1, failed_qps_, c_.where()));
  if (Status st = c_.stop_qps(n.qps); !st.ok()) return st;
  failed_qps_ |= n.qps;
  epoch_ = n.epoch;
  // A failed QP's standing receives flush after every arrival on it completed: once each QP showed a
  // flushed one, every part that made it through is counted. The sender sent MOVE once every part it
  // posted completed there, so what arrived on the live QPs is in the completion queues too.
  const auto deadline = Clock::now() + std::chrono::milliseconds(500);
  for (;;) {
    if (Status st = c_.poll(); !st.ok()) return st;
    if ((flushed_ & n.qps) == n.qps || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  failover::Notice held{failover::Kind::Held, epoch_, n.qps, ring_arrived_.messages + 1, {}};
  for (size_t index = 0; index < targets_.size(); ++index) {
    const RecvSlot& r = c_.slots()[index];
    const Targets& t = targets_[index];
    if (!r.in_use) continue;
    for (int i = 0; i < r.n; ++i)
      if (t.state[i] == kIncoming || t.state[i] == kAhead)
        held.held.push_back(
            {static_cast<uint16_t>(index * kMaxRecvs + static_cast<size_t>(i)), t.cts_seq[i], t.have[i]});
  }
  send_notice(c_, held);
  log_port_finding(c_, first_qp(n.qps), PortNews::kFailover, "link.failover",
                   fmt::format("the sender of connection {} moved the traffic of QPs {:#x} (this end's port "
                               "{}) to {} at {}: {} message(s) awaited here, their missing parts sent again",
                               c_.where(), n.qps, c_.qp_port(first_qp(n.qps)), c_.live_ports(failed_qps_),
                               wall_clock_now(), held.held.size()));
  return Status::success();
}

Status EagerRecv::on_probe(const failover::Notice& n) {
  if (n.epoch != epoch_ + 1 || (n.qps & ~failed_qps_) != 0)
    return bad_notice(
        fmt::format("PROBE of epoch {} for QPs {:#x} when epoch {} was due, for QPs moved "
                    "already ({:#x}), on {}",
                    n.epoch, n.qps, epoch_ + 1, failed_qps_, c_.where()));
  epoch_ = n.epoch;
  probing_qps_ = n.qps;
  // What the QPs' stop flushed is taken first, while they still count as failed: RESET may leave those
  // completions in the queue, and polled after RESTORED they would read as errors.
  if (Status st = c_.poll(); !st.ok()) return st;
  // Restarted from whatever state the QPs are in (RESET drops what they held, without completions):
  // the receives counted against them are gone with it, and each gets its standing receives again.
  // They stay out of the data path (failed_qps_) until RESTORED: only the probe's writes, which
  // consume no receive, come through them before it.
  if (Status st = c_.restart_qps(n.qps); !st.ok()) {
    // Not answered: the sender gives the probe up at its deadline and counts a failure.
    RS_INFO(NCCL_NET, "NET/railscope : PROBE of QPs {:#x} on {} not answered: {}", n.qps, c_.where(),
            st.finding().detail);
    return Status::success();
  }
  for (size_t q = 0; q < c_.qps().size() && q < failover::kMaxQps; ++q) {
    if ((n.qps >> q & 1) == 0) continue;
    reposts_pending_ -= reposts_due_[q];
    reposts_due_[q] = 0;
    for (uint32_t i = 0; i < eager::kReceiverRecvDepth; ++i)
      if (Status st = c_.post_recv(c_.qps()[q], kWrRecv | q); !st.ok()) return st;
  }
  flushed_ &= ~n.qps;
  send_notice(c_, failover::Notice{failover::Kind::Probe, epoch_, n.qps, 0, {}});
  return Status::success();
}

Status EagerRecv::on_restored(const failover::Notice& n) {
  if (n.epoch != epoch_ || n.qps != probing_qps_ || probing_qps_ == 0)
    return bad_notice(
        fmt::format("RESTORED of epoch {} for QPs {:#x} when the probe of epoch {} was for QPs "
                    "{:#x}, on {}",
                    n.epoch, n.qps, epoch_, probing_qps_, c_.where()));
  failed_qps_ &= ~n.qps;
  probing_qps_ = 0;
  c_.ports_restored(n.qps);
  failover::log_receiver_recovered(c_, n.qps, failed_qps_);
  return Status::success();
}

}  // namespace railscope::net::verbs
