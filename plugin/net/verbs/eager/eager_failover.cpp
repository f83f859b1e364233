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
#include "plugin/net/verbs/failover/failover_policy.h"
#include "plugin/net/verbs/failover/part_ledger.h"
#include "plugin/net/verbs/failover/replay_plan.h"
#include "plugin/net/verbs/watch/diagnosis_map.h"
#include "railscope/core/diagnosis.h"
#include "railscope/core/log.h"
#include "railscope/ibv/ibv.h"

namespace railscope::net::verbs {
namespace {

using Clock = Connection::Clock;

Status bad_notice(std::string text) {
  return Status::fail(ncclRemoteError, "peer.bad_handshake", std::move(text));
}

void send_notice(Connection& c, const failover::Notice& n) {
  Message m;
  m.type = MessageType::Failover;
  m.failover = failover::encode(n);
  c.oob().send(m);
  bool done = false;
  // A few bytes into a socket idle since the handshake: the kernel takes them at once; what it does
  // not is written by the next flush (poll_held, or the next notice).
  (void)c.oob().flush(&done);
}

// The first QP of `mask`, for naming its port.
size_t first_qp(uint64_t mask) { return static_cast<size_t>(std::countr_zero(mask)); }

}  // namespace

// --- sender

size_t EagerSend::live_qp_for(size_t part) const {
  const size_t nqps = c_.qps().size();
  size_t nlive = 0;
  for (size_t q = 0; q < nqps && q < failover::kMaxQps; ++q) nlive += (failed_qps_ >> q & 1) == 0 ? 1 : 0;
  size_t k = part % (nlive == 0 ? 1 : nlive);
  for (size_t q = 0; q < nqps && q < failover::kMaxQps; ++q)
    if ((failed_qps_ >> q & 1) == 0 && k-- == 0) return q;
  return 0;  // not reached: a failover leaves the ring's QP live
}

bool EagerSend::on_port_lost(size_t lane) {
  const uint64_t mask = c_.lane_qps(lane);
  if (mask != 0 && (mask & ~failed_qps_) == 0) return true;  // moved already
  return start_failover(mask, "down past the QPs' retry budget");
}

bool EagerSend::failover_absorbs(const ibv_wc& wc) {
  if (!c_.can_fail_over()) return false;
  const size_t lane = c_.completion_lane();
  const size_t q = c_.qp_index(lane, wc.qp_num);
  if (q >= c_.qps().size() || q >= failover::kMaxQps) return false;
  if ((failed_qps_ >> q & 1) == 0) {
    const QpLane& ql = c_.qps()[q];
    const uint64_t path =
        c_.lane_qps(lane) & failover::remote_dev_qps(static_cast<size_t>(ql.remote_dev),
                                                     c_.remote().devs.size(), c_.qps().size());
    if (!start_failover(path, ibv::wc_status_text(wc.status))) return false;
  }
  // A work request of a QP whose traffic moved: flushed (or failed) with it.
  const uint64_t kind = wc.wr_id & kWrKindMask, low = wc.wr_id & ~kWrKindMask;
  if (kind != kWrSend || low >= c_.pool().capacity()) return false;
  SendReq& r = c_.pool().at(low);
  if (r.pending > 0 && --r.pending == 0) mailbox_used_ &= ~(uint64_t{1} << r.mailbox);
  return true;
}

bool EagerSend::start_failover(uint64_t mask, const std::string& cause) {
  const size_t nqps = c_.qps().size();
  if (!c_.can_fail_over() || epoch_ != 0 || !failover::movable(mask, nqps)) return false;
  if (!c_.stop_qps(mask).ok()) return false;
  failed_qps_ = mask;
  epoch_ = 1;
  awaiting_held_ = true;
  moved_ = 0;
  // Every large message in flight is held (one more pending) until the receiver's HELD says what of it
  // arrived: its parts on the failed QPs may have to go again.
  // Their stall budget starts again: the exchange and what it sends again must fit in it.
  const auto now = Clock::now();
  for (size_t i = 0; i < c_.pool().capacity(); ++i)
    if (SendReq& r = c_.pool().at(i); r.data_live) {
      ++r.pending;
      r.posted_at = now;
      ++moved_;
    }
  send_notice(c_, failover::Notice{failover::Kind::Move, epoch_, mask, 0, {}});
  const auto live = static_cast<size_t>(nqps - static_cast<size_t>(std::popcount(mask)));
  RS_WARN("NET/railscope : {}",
          diag::one_line(diag::make(
              "link.failover",
              fmt::format("port {} of connection {} failed ({}): its QPs {:#x} stopped; traffic moves to {} "
                          "({} of {} QPs, about {}% of the connection's bandwidth), {} large message(s) in "
                          "flight checked with the receiver",
                          c_.qp_port(first_qp(mask)), c_.where(), cause, mask, c_.live_ports(mask), live,
                          nqps, live * 100 / nqps, moved_))));
  return true;
}

Status EagerSend::poll_held() {
  bool flushed = false;
  if (Status st = c_.oob().flush(&flushed); !st.ok()) return c_.fail(std::move(st));
  std::optional<Message> m;
  if (Status st = c_.oob().receive(&m); !st.ok()) return c_.fail(std::move(st));
  if (!m) return Status::success();
  if (m->type != MessageType::Failover)
    return c_.fail(
        bad_notice(fmt::format("out-of-band message of type {} while the failover waits for HELD on {}",
                               static_cast<int>(m->type), c_.where())));
  const size_t nqps = c_.qps().size();
  std::string why;
  const std::optional<failover::Notice> n = failover::decode(m->failover, nqps, &why);  // the one copy used
  if (!n) return c_.fail(bad_notice(fmt::format("{} on {}", why, c_.where())));
  if (n->kind != failover::Kind::Held || n->epoch != epoch_ || n->qps != failed_qps_ ||
      n->ring_next > ring_.posted() + 1)
    return c_.fail(bad_notice(fmt::format(
        "failover notice kind {} epoch {} QPs {:#x} ring message {} when HELD of "
        "epoch {} for QPs {:#x} was due on {}",
        static_cast<int>(n->kind), n->epoch, n->qps, n->ring_next, epoch_, failed_qps_, c_.where())));
  // Every completion of the failed QPs polled: what completed there is with the receiver, in its HELD.
  if (Status st = c_.poll(); !st.ok()) return st;
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
  RS_INFO(NCCL_NET,
          "NET/railscope : failover of {}: the receiver holds what arrived; {} part(s) of {} message(s) sent "
          "again on {}",
          c_.where(), replays.size(), moved_, c_.live_ports(failed_qps_));
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
    std::optional<Message> m;
    if (Status st = c_.oob().receive(&m); !st.ok())
      // A peer gone is the liveness check's to report, in its words.
      return st.finding().id() == "peer.closed" ? Status::success() : st;
    if (!m) return Status::success();
    if (m->type != MessageType::Failover)
      return bad_notice(fmt::format("out-of-band message of type {} during the transfer on {}",
                                    static_cast<int>(m->type), c_.where()));
    if (Status st = on_move(*m); !st.ok()) return st;
  }
}

Status EagerRecv::on_move(const Message& m) {
  const size_t nqps = c_.qps().size();
  std::string why;
  const std::optional<failover::Notice> n = failover::decode(m.failover, nqps, &why);  // the one copy used
  if (!n) return bad_notice(fmt::format("{} on {}", why, c_.where()));
  if (n->kind != failover::Kind::Move || n->epoch != epoch_ + 1 || (n->qps & failed_qps_) != 0 ||
      !failover::movable(n->qps | failed_qps_, nqps))
    return bad_notice(
        fmt::format("failover notice kind {} epoch {} QPs {:#x} when MOVE of epoch {} was due, "
                    "leaving the ring's QP, on {}",
                    static_cast<int>(n->kind), n->epoch, n->qps, epoch_ + 1, c_.where()));
  if (Status st = c_.stop_qps(n->qps); !st.ok()) return st;
  failed_qps_ |= n->qps;
  epoch_ = n->epoch;
  // A failed QP's standing receives flush after every arrival on it completed: once each QP showed a
  // flushed one, every part that made it through is counted.
  const auto deadline = Clock::now() + std::chrono::milliseconds(500);
  while ((flushed_ & n->qps) != n->qps && Clock::now() < deadline) {
    if (Status st = c_.poll(); !st.ok()) return st;
    if ((flushed_ & n->qps) != n->qps) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  failover::Notice held{failover::Kind::Held, epoch_, n->qps, ring_arrived_.messages + 1, {}};
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
  RS_INFO(NCCL_NET,
          "NET/railscope : failover of {}: QPs {:#x} stopped at the sender's request; {} message(s) awaited",
          c_.where(), n->qps, held.held.size());
  return Status::success();
}

}  // namespace railscope::net::verbs
