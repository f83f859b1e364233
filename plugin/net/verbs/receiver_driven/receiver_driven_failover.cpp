// SPDX-License-Identifier: Apache-2.0
// Failover of the receiver-driven protocol across the ports of a virtual NIC (docs/failover.md): the
// sender moves the traffic of a failed port's QPs to the connection's other QPs, the receiver says
// which QPs' immediates arrived for each receive in flight, and the sender writes again, on QP 0, the
// parts that did not, ending them with one replayed immediate. A port ACTIVE again is probed, and
// traffic returns to it from the first receive the receiver posts after it heard so. Off the data
// path: this runs on a completion in error, a port failure, and the out-of-band notices.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <span>
#include <thread>
#include <vector>

#include "plugin/net/verbs/failover/connection_notices.h"
#include "plugin/net/verbs/failover/failover_policy.h"
#include "plugin/net/verbs/receiver_driven/receiver_driven.h"
#include "plugin/net/verbs/receiver_driven/receiver_driven_writes.h"
#include "plugin/net/verbs/watch/diagnosis_map.h"
#include "plugin/net/verbs/watch/port_health.h"
#include "railscope/core/log.h"
#include "railscope/ibv/ibv.h"

namespace railscope::net::verbs {
namespace {

using Clock = Connection::Clock;
using failover::bad_notice;
using failover::first_qp;
using failover::log_port_finding;
using failover::PortNews;
using failover::send_notice;

using failover::all_qps;
using Step = failover::PortProbe::Step;

// Appends to wrs and sges the plain RDMA writes of part q (of nqps, chunk_of) of each of the slot's
// sends, as the QP on local lane `lane` towards the peer's device `rd` posts them.
void add_part_writes(std::span<SendReq* const> reqs, std::span<const CtsTarget> cts, size_t q, size_t nqps,
                     size_t lane, size_t rd, std::vector<ibv_send_wr>* wrs, std::vector<ibv_sge>* sges) {
  for (size_t i = 0; i < reqs.size(); ++i) {
    const SendReq* r = reqs[i];
    size_t off = 0, len = 0;
    chunk_of(r->size, q, nqps, &off, &len);
    if (len == 0) continue;
    sges->push_back(
        {reinterpret_cast<uint64_t>(r->data) + off, static_cast<uint32_t>(len), r->mr->mr[lane]->lkey});
    ibv_send_wr w{};
    w.opcode = IBV_WR_RDMA_WRITE;
    w.num_sge = 1;
    w.wr.rdma.remote_addr = cts[i].addr + off;
    w.wr.rdma.rkey = cts[i].rkey[rd];
    wrs->push_back(w);
  }
}

// Links the chain (each work request to the next) and each one with an sge to its own, in order: once
// the vectors no longer grow.
void link_chain(std::vector<ibv_send_wr>* wrs, std::vector<ibv_sge>* sges) {
  for (size_t k = 0, g = 0; k < wrs->size(); ++k) {
    if ((*wrs)[k].num_sge == 1) (*wrs)[k].sg_list = &(*sges)[g++];
    if (k + 1 < wrs->size()) (*wrs)[k].next = &(*wrs)[k + 1];
  }
}

}  // namespace

// --- sender

uint32_t ReceiverDrivenSend::moved_work_requests(uint32_t nreqs, uint64_t moved) const {
  const size_t nqps = c_.qps().size();
  const uint64_t live = all_qps(nqps) & ~moved;
  size_t most = 0;
  for (size_t l = 0; l < nqps && l < 64; ++l) {
    if ((live >> l & 1) == 0) continue;
    size_t parts = 1;  // its own
    for (size_t q = 0; q < nqps && q < 64; ++q)
      if ((moved >> q & 1) != 0 && failover::live_qp_for(q, moved, nqps) == l) ++parts;
    most = std::max(most, parts);
  }
  // A write per buffer and part it carries, and the write with immediate (the sizes record on QP 0),
  // with or without a sizes record.
  return static_cast<uint32_t>(most * nreqs + 1);
}

Status ReceiverDrivenSend::post_moved(Slot& s, int index) {
  const size_t nqps = c_.qps().size();
  const auto nreqs = static_cast<size_t>(s.nreqs);
  const uint64_t moved = moved_for(s.seq);
  const uint64_t live = all_qps(nqps) & ~moved;
  s.moved = moved;
  // Every receive the receiver posted before it heard of the restored QPs is now written.
  if (resumed_qps_ != 0 && s.seq + 1 >= resume_seq_) resumed_qps_ = 0;
  const bool in_area = receiver_driven::needs_sizes_record(nreqs, s.reqs[0]->size);
  auto* record = static_cast<SizesSlot*>(sizes_.get()) + index;
  if (in_area)
    for (size_t i = 0; i < nreqs; ++i) (*record)[i] = static_cast<int32_t>(s.reqs[i]->size);
  int chains = 0;
  const auto posting = Clock::now();
  for (size_t l = 0; l < nqps && l < 64; ++l) {
    if ((live >> l & 1) == 0) continue;
    const QpLane& ql = c_.qps()[l];
    const auto lane = static_cast<size_t>(ql.lane);
    const auto rd = static_cast<size_t>(ql.remote_dev);
    std::vector<ibv_send_wr> wrs;
    std::vector<ibv_sge> sges;
    wrs.reserve(nreqs * nqps + 1);
    sges.reserve(nreqs * nqps + 1);
    // Its own part, then those of the moved QPs it carries: plain writes, before its immediate on the
    // same QP, so they have landed when the immediate completes the receive.
    for (size_t q = 0; q < nqps && q < 64; ++q)
      if (q == l || ((moved >> q & 1) != 0 && failover::live_qp_for(q, moved, nqps) == l))
        add_part_writes(std::span(s.reqs, nreqs), std::span(s.cts, nreqs), q, nqps, lane, rd, &wrs, &sges);
    ibv_send_wr last{};
    last.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    last.send_flags = IBV_SEND_SIGNALED;
    last.wr_id = kWrSend | static_cast<uint64_t>(index);
    const uint64_t area = c_.remote().addr;
    const uint32_t area_rkey = c_.remote().devs[rd].rkey;
    if (in_area && l == 0) {  // QP 0 writes the sizes record, as without a failover
      sges.push_back({reinterpret_cast<uint64_t>(record->data()),
                      static_cast<uint32_t>(sizeof(int32_t) * nreqs), sizes_.mrs[lane]->lkey});
      last.num_sge = 1;
      last.wr.rdma.remote_addr = area + sizeof(SizesSlot) * static_cast<size_t>(index);
      last.wr.rdma.rkey = area_rkey;
    } else {
      last.wr.rdma.remote_addr = in_area ? area : s.cts[0].addr;
      last.wr.rdma.rkey = in_area ? area_rkey : s.cts[0].rkey[rd];
    }
    last.imm_data = htonl(in_area ? kSizesInArea : static_cast<uint32_t>(s.reqs[0]->size));
    wrs.push_back(last);
    link_chain(&wrs, &sges);
    ibv_send_wr* bad = nullptr;
    if (int rc = ibv_post_send(ql.qp.get(), wrs.data(), &bad); rc != 0)
      return Status::fail(ncclSystemError, post_finding("ibv_post_send", rc, c_.where()));
    ++chains;
  }
  mark_posted(s, chains, posting);
  return Status::success();
}

bool ReceiverDrivenSend::on_port_lost(size_t lane) {
  const uint64_t mask = c_.lane_qps(lane);
  if (mask != 0 && (mask & ~failed_qps_) == 0) return true;  // moved already
  return start_failover(mask, "down past the QPs' retry budget");
}

bool ReceiverDrivenSend::failover_absorbs(const ibv_wc& wc) {
  if (!c_.can_fail_over()) return false;
  const uint64_t kind = wc.wr_id & kWrKindMask;
  if (kind == kWrProbe) return on_probe_done(static_cast<size_t>(wc.wr_id & ~kWrKindMask), false).ok();
  uint64_t path = 0;
  const size_t q = failover::completion_path(c_, wc, &path);
  if (q >= c_.qps().size()) return false;
  if ((failed_qps_ >> q & 1) == 0 && !start_failover(path, ibv::wc_status_text(wc.status))) return false;
  // A work request of a QP whose traffic moved, flushed (or failed) with it: the signalled one ends its
  // slot's chain on that QP; the others carry no wr_id.
  const auto index = static_cast<size_t>(wc.wr_id & ~kWrKindMask);
  if (kind != kWrSend) return wc.wr_id == 0;
  if (index >= slots_.size()) return false;
  Slot& s = slots_[index];
  if (s.pending > 0 && --s.pending == 0 && !budget_.retired(s.wrs)) return false;
  return true;
}

bool ReceiverDrivenSend::start_failover(uint64_t mask, const std::string& cause) {
  const size_t nqps = c_.qps().size();
  mask &= ~failed_qps_;
  if (mask == 0) return true;  // moved already
  // A failure while MOVE, PROBE or RESTORED waits for its answer is one exchange too many: the
  // connection fails.
  if (!c_.can_fail_over() || holds_slots() || probe_.step() == Step::kAwaitingAnswer ||
      !failover::movable(failed_qps_ | mask, nqps))
    return false;
  if (probe_.step() == Step::kProbing)
    probe_.give_up("another port of the connection failed during the probe", failed_qps_);
  if (!c_.stop_qps(mask).ok()) return false;
  const auto now = Clock::now();
  const bool kept_out = probe_.left(mask, now);
  failed_qps_ |= mask;
  exchange_qps_ = mask;
  ++epoch_;
  exchange_ = Exchange::kDraining;
  // Every slot in flight is held (one more pending) until the receiver's HELD says what of it arrived:
  // until then it waits on the exchange's budget, not on its stall budget.
  exchange_since_ = now;
  size_t held = 0;
  for (Slot& s : slots_)
    if (s.posted && s.pending > 0) {
      ++s.pending;
      s.held = true;
      ++held;
    }
  log_port_finding(c_, first_qp(mask), PortNews::kFailover, "link.failover",
                   failover::moved_off_text(c_, mask, failed_qps_, cause, held, "message(s)") +
                       failover::failures_text(kept_out, probe_.failures(first_qp(mask))));
  return true;
}

Status ReceiverDrivenSend::poll_notices() {
  const auto now = Clock::now();
  if (holds_slots())
    if (Status st = failover::exchange_check(
            c_, exchange_since_, now,
            exchange_ == Exchange::kDraining ? "the completion here of every write posted before the failure"
            : exchange_ == Exchange::kAwaitingHeld ? "the receiver's HELD"
                                                   : "the receiver's answer to RESTORED");
        !st.ok())
      return st;
  switch (exchange_) {
    case Exchange::kDraining: return send_move_when_drained();
    case Exchange::kAwaitingHeld: return poll_held();
    case Exchange::kProbe: return probe_progress();
    case Exchange::kAwaitingResume: return poll_resume();
    case Exchange::kNone: break;
  }
  // One restored port at a time: the next waits until every receive posted before the receiver heard
  // of the last one is written (moved_for keeps one boundary).
  if (failed_qps_ == 0 || resumed_qps_ != 0) return Status::success();
  probe_.start(failed_qps_, &epoch_, now);
  if (probe_.step() != Step::kNone) exchange_ = Exchange::kProbe;
  return Status::success();
}

Status ReceiverDrivenSend::send_move_when_drained() {
  if (Status st = c_.poll(); !st.ok()) return st;
  for (const Slot& s : slots_)
    if (s.held && s.pending > 1) return Status::success();
  // Every write posted before the failure completed here: on a live QP it was acknowledged, so the
  // receiver has its immediate, and on a stopped one it flushed. The held slots' work requests have
  // left the send queues.
  for (Slot& s : slots_)
    if (s.held) {
      (void)budget_.retired(s.wrs);
      s.wrs = 0;
    }
  send_notice(c_, failover::Notice{failover::Kind::Move, epoch_, exchange_qps_, 0, {}});
  exchange_ = Exchange::kAwaitingHeld;
  return Status::success();
}

Status ReceiverDrivenSend::post_replay(Slot& s, int index, uint64_t parts) {
  const size_t nqps = c_.qps().size();
  const QpLane& ql = c_.qps()[0];
  const auto lane = static_cast<size_t>(ql.lane);
  const auto rd = static_cast<size_t>(ql.remote_dev);
  std::vector<ibv_send_wr> wrs;
  std::vector<ibv_sge> sges;
  const auto nreqs = static_cast<size_t>(s.nreqs);
  for (size_t q = 0; q < nqps && q < 64; ++q)
    if ((parts >> q & 1) != 0)
      add_part_writes(std::span(s.reqs, nreqs), std::span(s.cts, nreqs), q, nqps, lane, rd, &wrs, &sges);
  ibv_send_wr last{};
  last.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  last.send_flags = IBV_SEND_SIGNALED;
  last.wr_id = kWrSend | static_cast<uint64_t>(index);
  last.wr.rdma.remote_addr = s.cts[0].addr;
  last.wr.rdma.rkey = s.cts[0].rkey[rd];
  last.imm_data = htonl(kReplayImm | static_cast<uint32_t>(index));
  wrs.push_back(last);
  link_chain(&wrs, &sges);
  const auto n = static_cast<uint32_t>(wrs.size());
  // The held slots left the send queues; only replays are in flight, and they complete.
  const auto deadline = Clock::now() + std::max<Clock::duration>(c_.stall_budget(), std::chrono::seconds(2));
  while (!budget_.fits(n)) {
    if (Status st = c_.poll(); !st.ok()) return st;
    if (Clock::now() > deadline)
      return Status::fail(
          ncclSystemError, "progress.stalled",
          fmt::format("failover of {}: the parts written again did not complete", c_.where()));
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(ql.qp.get(), wrs.data(), &bad); rc != 0)
    return Status::fail(ncclSystemError, post_finding("ibv_post_send (failover)", rc, c_.where()));
  budget_.posted(n);
  s.wrs += n;
  ++s.pending;
  s.posted_at = Clock::now();
  return Status::success();
}

Status ReceiverDrivenSend::poll_held() {
  std::optional<failover::Notice> n;
  if (Status st = failover::next_notice(c_, epoch_, "HELD", &n); !st.ok()) return c_.fail(std::move(st));
  if (!n) return Status::success();
  if (n->kind != failover::Kind::Held || n->epoch != epoch_ || n->qps != exchange_qps_ || n->next_seq != 0)
    return c_.fail(bad_notice(fmt::format(
        "failover notice kind {} epoch {} QPs {:#x} ring message {} when HELD of epoch {} for QPs {:#x} "
        "was due on {}",
        static_cast<int>(n->kind), n->epoch, n->qps, n->next_seq, epoch_, exchange_qps_, c_.where())));
  // Each entry must be a held slot, by index and seq; its receive waits for the parts whose carrier
  // failed. The immediate of QP 0 (live) arrived: the slot's writes completed here before MOVE.
  for (const failover::PartsHeld& h : n->held) {
    const Slot* s = h.target < slots_.size() ? &slots_[h.target] : nullptr;
    if (s == nullptr || !s->held || static_cast<uint32_t>(s->seq) != h.seq || (h.parts & 1) == 0)
      return c_.fail(bad_notice(
          fmt::format("HELD names receive slot {} (seq {}, QPs {:#x} arrived), not a message this end holds "
                      "in flight, on {}",
                      h.target, h.seq, h.parts, c_.where())));
  }
  const size_t nqps = c_.qps().size();
  size_t replays = 0;
  for (const failover::PartsHeld& h : n->held) {
    Slot& s = slots_[h.target];
    // Part q went on QP q, or on the live QP that carried it when the slot was posted (s.moved): it is
    // lost when that QP failed now and its immediate did not arrive.
    uint64_t parts = 0;
    for (size_t q = 0; q < nqps && q < 64; ++q) {
      const size_t carrier = (s.moved >> q & 1) != 0 ? failover::live_qp_for(q, s.moved, nqps) : q;
      if ((exchange_qps_ >> carrier & 1) != 0 && (h.parts >> carrier & 1) == 0) parts |= uint64_t{1} << q;
    }
    if (parts == 0) continue;
    if (Status st = post_replay(s, h.target, parts); !st.ok()) return c_.fail(std::move(st));
    ++replays;
  }
  size_t held = 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (!s.held) continue;
    s.held = false;
    ++held;
    if (s.pending > 0 && --s.pending == 0 && !budget_.retired(s.wrs)) return c_.fail(beyond_budget(i));
  }
  exchange_ = Exchange::kNone;
  RS_INFO(NCCL_NET,
          "NET/railscope : failover of {}: the receiver holds what arrived; the parts of {} of {} message(s) "
          "sent again on QP 0",
          c_.where(), replays, held);
  return Status::success();
}

Status ReceiverDrivenSend::probe_progress() {
  bool passed = false;
  if (Status st = probe_.progress(epoch_, failed_qps_, &passed); !st.ok()) return st;
  return probe_ended(passed);
}

Status ReceiverDrivenSend::on_probe_done(size_t q, bool ok) {
  bool passed = false;
  if (Status st = probe_.on_write_done(q, ok, failed_qps_, &passed); !st.ok()) return st;
  return probe_ended(passed);
}

Status ReceiverDrivenSend::probe_ended(bool passed) {
  if (passed) {
    // The receiver posts its next receives on the QPs too, and says from which one: until its answer
    // no slot is posted, so that none is written on QPs its receive has no standing receive on.
    send_notice(c_, failover::Notice{failover::Kind::Restored, epoch_, probe_.qps(), 0, {}});
    exchange_ = Exchange::kAwaitingResume;
    exchange_since_ = Clock::now();
    return Status::success();
  }
  if (probe_.step() == Step::kNone && exchange_ == Exchange::kProbe) exchange_ = Exchange::kNone;
  return Status::success();
}

Status ReceiverDrivenSend::poll_resume() {
  std::optional<failover::Notice> n;
  if (Status st = failover::next_notice(c_, epoch_, "the answer to RESTORED", &n); !st.ok())
    return c_.fail(std::move(st));
  if (!n) return Status::success();
  const uint64_t mask = probe_.qps();
  // The receiver has posted every receive this end matched (head_), and at most kCtsSlots beyond it.
  if (n->kind != failover::Kind::Restored || n->epoch != epoch_ || n->qps != mask || n->next_seq <= head_ ||
      n->next_seq > head_ + 1 + kCtsSlots)
    return c_.fail(bad_notice(fmt::format(
        "failover notice kind {} epoch {} QPs {:#x} first receive {} when the answer to RESTORED of epoch {} "
        "for QPs {:#x} (a receive after {}) was due on {}",
        static_cast<int>(n->kind), n->epoch, n->qps, n->next_seq, epoch_, mask, head_, c_.where())));
  failed_qps_ &= ~mask;
  resume_seq_ = n->next_seq;
  resumed_qps_ = resume_seq_ > head_ + 1 ? mask : 0;
  const double out_for = probe_.seconds_out(first_qp(mask), Clock::now());
  probe_.restored();
  c_.ports_restored(mask);
  exchange_ = Exchange::kNone;
  failover::log_sender_recovered(c_, mask, out_for, failed_qps_);
  return Status::success();
}

// --- receiver

Status ReceiverDrivenRecv::post_live_receives(size_t index) {
  const auto& qps = c_.qps();
  const uint64_t live = all_qps(qps.size()) & ~failed_qps_;
  int n = 0;
  for (size_t k = 0; k < qps.size() && k < 64; ++k) {
    if ((live >> k & 1) == 0) continue;
    ibv_recv_wr wr{};
    wr.wr_id = kWrRecv | recv_wr_low(k, index);
    ibv_recv_wr* bad = nullptr;
    if (int rc = ibv_post_recv(qps[k].qp.get(), &wr, &bad); rc != 0) return recv_post_failed(rc);
    ++n;
  }
  progress_[index] = Progress{n, 0, 0, false, live};
  return Status::success();
}

Status ReceiverDrivenRecv::on_replay(size_t index, uint32_t imm) {
  Progress& p = progress_[index];
  if (!p.replay_due || (imm & ~kReplayImmMask) != index)
    return Status::fail(ncclRemoteError, "peer.bad_handshake",
                        fmt::format("replayed immediate {:#x} for receive slot {}, which awaits none, on {}",
                                    imm, index, c_.where()));
  p.replay_due = false;
  --p.pending;
  return Status::success();
}

Status ReceiverDrivenRecv::on_moved_arrival(const ibv_wc& wc, uint64_t low, uint32_t imm) {
  const size_t q = recv_wr_qp(low);
  const bool replay = is_replay_imm(imm);
  size_t index = recv_wr_slot(low);
  if (q == 0 && qp0_count_ != 0) {
    const uint8_t e = qp0_order_[qp0_next_++];
    --qp0_count_;
    index = e & ~kReplayEntry;
    if (((e & kReplayEntry) != 0) != replay)
      return Status::fail(
          ncclRemoteError, "peer.bad_handshake",
          fmt::format(
              "{} on QP 0 (immediate {:#x}) where the failover's order has {} of receive slot {}, on {}",
              replay ? "a replayed immediate" : "an immediate", imm,
              (e & kReplayEntry) != 0 ? "the replay" : "the data", index, c_.where()));
  } else if (replay && q != 0) {
    return Status::fail(
        ncclRemoteError, "peer.bad_handshake",
        fmt::format("replayed immediate {:#x} on QP {} (replays come on QP 0) on {}", imm, q, c_.where()));
  }
  if (index >= progress_.size() || !c_.slots()[index].in_use) return unexpected_completion(wc);
  if (replay) return on_replay(index, imm);
  arrived(index, q, imm);
  return Status::success();
}

Status ReceiverDrivenRecv::on_failed_completion(const ibv_wc& wc) {
  const uint64_t kind = wc.wr_id & kWrKindMask, low = wc.wr_id & ~kWrKindMask;
  if (kind == kWrRecv && recv_wr_qp(low) < failover::kMaxQps && (failed_qps_ >> recv_wr_qp(low) & 1) != 0) {
    flushed_ |= uint64_t{1} << recv_wr_qp(low);
    return Status::success();
  }
  return failed_completion(wc);
}

bool ReceiverDrivenRecv::on_port_lost(size_t lane) {
  // The sender moves the traffic (its MOVE comes, or came): this end only has to outlive its port.
  const uint64_t mask = c_.lane_qps(lane);
  if (mask != 0 && (mask & ~failed_qps_) == 0) return true;  // moved already
  return failover::movable(mask | failed_qps_, c_.qps().size());
}

Status ReceiverDrivenRecv::poll_notices() {
  for (;;) {
    std::optional<failover::Notice> n;
    if (Status st = failover::next_sender_notice(c_, &n); !st.ok() || !n) return st;
    Status st;
    switch (n->kind) {
      case failover::Kind::Move: st = on_move(*n); break;
      case failover::Kind::Probe: st = on_probe(*n); break;
      case failover::Kind::Restored: st = on_restored(*n); break;
      case failover::Kind::Held:
        st = bad_notice(fmt::format("failover notice kind {} epoch {} from the sender on {}",
                                    static_cast<int>(n->kind), n->epoch, c_.where()));
        break;
    }
    if (!st.ok()) return st;
  }
}

Status ReceiverDrivenRecv::on_move(const failover::Notice& n) {
  const size_t nqps = c_.qps().size();
  const uint64_t all = all_qps(nqps);
  if (n.epoch != epoch_ + 1 || (n.qps & failed_qps_) != 0 || !failover::movable(n.qps | failed_qps_, nqps))
    return bad_notice(fmt::format(
        "MOVE of epoch {} for QPs {:#x} when epoch {} was due, leaving QP 0 and naming none moved "
        "already ({:#x}), on {}",
        n.epoch, n.qps, epoch_ + 1, failed_qps_, c_.where()));
  epoch_ = n.epoch;
  probing_qps_ = 0;  // a probe in progress was given up
  flushed_ &= ~n.qps;
  if (Status st = c_.stop_qps(n.qps); !st.ok()) return st;
  failed_qps_ |= n.qps;
  // A failed QP's standing receives flush after every arrival on it completed: once each QP with one
  // showed a flushed one, every immediate that made it through is counted. The sender sent MOVE once
  // every write it posted completed there, so what arrived on the live QPs is in the queues too.
  uint64_t flushing = 0;
  for (size_t index = 0; index < progress_.size(); ++index) {
    const Progress& p = progress_[index];
    if (c_.slots()[index].in_use && p.pending > 0)
      flushing |= (p.standing != 0 ? p.standing : all) & n.qps & ~p.arrived;
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(500);
  while (flushing != 0) {
    if (Status st = c_.poll(); !st.ok()) return st;
    if ((flushed_ & flushing) == flushing || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  // Per receive in flight: a written one (QP 0's immediate arrived) is listed with the QPs whose
  // immediate arrived, and waits for one replayed immediate when a failed one's did not; one not written
  // yet waits for the QPs it has standing receives on that are left. QP 0's arrivals then come in the
  // sender's order: the replays, then the receives not written yet, oldest first (qp0_order_).
  failover::Notice held{failover::Kind::Held, epoch_, n.qps, 0, {}};
  std::array<uint8_t, kCtsSlots> replays{};
  uint32_t nreplays = 0;
  for (size_t index = 0; index < progress_.size(); ++index) {
    Progress& p = progress_[index];
    if (!c_.slots()[index].in_use || p.pending <= 0) continue;
    const uint64_t standing = p.standing != 0 ? p.standing : all;
    p.standing = standing & ~n.qps;
    if (p.arrived == 0) {
      p.pending = std::popcount(p.standing);
      continue;
    }
    const uint64_t missing = standing & n.qps & ~p.arrived;
    p.pending = std::popcount(p.standing & ~p.arrived) + (missing != 0 ? 1 : 0);
    if (missing != 0) {
      ibv_recv_wr wr{};
      wr.wr_id = kWrRecv | recv_wr_low(0, index);
      ibv_recv_wr* bad = nullptr;
      if (int rc = ibv_post_recv(c_.qps()[0].qp.get(), &wr, &bad); rc != 0) return recv_post_failed(rc);
      p.replay_due = true;
      replays[nreplays++] = static_cast<uint8_t>(index | kReplayEntry);
    }
    // The receive's seq: the one of the last kCtsSlots whose slot this is.
    const uint64_t seq = tail_ - ((tail_ - 1 - index) % static_cast<uint64_t>(kCtsSlots));
    held.held.push_back({static_cast<uint16_t>(index), static_cast<uint32_t>(seq), p.arrived & all});
  }
  // An earlier failover's order not yet through is rebuilt too: its receives still to come are among
  // those not written, in the same order.
  const bool reorder = nreplays != 0 || qp0_count_ != 0;
  qp0_next_ = 0;
  qp0_count_ = 0;
  if (reorder) {
    for (uint32_t i = 0; i < nreplays; ++i) qp0_order_[qp0_count_++] = replays[i];
    for (uint64_t seq = tail_ > kCtsSlots ? tail_ - kCtsSlots + 1 : 1; seq <= tail_; ++seq) {
      const auto index = static_cast<size_t>((seq - 1) % kCtsSlots);
      if (c_.slots()[index].in_use && progress_[index].arrived == 0 && progress_[index].pending > 0)
        qp0_order_[qp0_count_++] = static_cast<uint8_t>(index);
    }
  }
  send_notice(c_, held);
  log_port_finding(c_, first_qp(n.qps), PortNews::kFailover, "link.failover",
                   fmt::format("the sender of connection {} moved the traffic of QPs {:#x} (this end's port "
                               "{}) to {} at {}: {} message(s) awaited here, their missing parts sent again",
                               c_.where(), n.qps, c_.qp_port(first_qp(n.qps)), c_.live_ports(failed_qps_),
                               wall_clock_now(), held.held.size()));
  return Status::success();
}

Status ReceiverDrivenRecv::on_probe(const failover::Notice& n) {
  if (n.epoch != epoch_ + 1 || (n.qps & ~failed_qps_) != 0)
    return bad_notice(
        fmt::format("PROBE of epoch {} for QPs {:#x} when epoch {} was due, for QPs moved "
                    "already ({:#x}), on {}",
                    n.epoch, n.qps, epoch_ + 1, failed_qps_, c_.where()));
  epoch_ = n.epoch;
  probing_qps_ = 0;
  // What the QPs' stop flushed is taken first, while they still count as failed: RESET may leave those
  // completions in the queue, and polled later they would read as errors.
  if (Status st = c_.poll(); !st.ok()) return st;
  // Restarted from whatever state the QPs are in. They get standing receives only for the receives
  // posted after RESTORED (on_restored): the probe's writes consume none.
  if (Status st = c_.restart_qps(n.qps); !st.ok()) {
    // Not answered: the sender gives the probe up at its deadline and counts a failure.
    RS_INFO(NCCL_NET, "NET/railscope : PROBE of QPs {:#x} on {} not answered: {}", n.qps, c_.where(),
            st.finding().detail);
    return Status::success();
  }
  flushed_ &= ~n.qps;
  probing_qps_ = n.qps;
  send_notice(c_, failover::Notice{failover::Kind::Probe, epoch_, n.qps, 0, {}});
  return Status::success();
}

Status ReceiverDrivenRecv::on_restored(const failover::Notice& n) {
  if (n.epoch != epoch_ || n.qps != probing_qps_ || probing_qps_ == 0)
    return bad_notice(
        fmt::format("RESTORED of epoch {} for QPs {:#x} when the probe of epoch {} was for QPs "
                    "{:#x}, on {}",
                    n.epoch, n.qps, epoch_, probing_qps_, c_.where()));
  failed_qps_ &= ~n.qps;
  probing_qps_ = 0;
  c_.ports_restored(n.qps);
  // The next receive is the first with standing receives on the QPs: the sender writes it, and every
  // later one, over them too, and the ones before it without them.
  send_notice(c_, failover::Notice{failover::Kind::Restored, epoch_, n.qps, tail_ + 1, {}});
  failover::log_receiver_recovered(c_, n.qps, failed_qps_);
  return Status::success();
}

}  // namespace railscope::net::verbs
