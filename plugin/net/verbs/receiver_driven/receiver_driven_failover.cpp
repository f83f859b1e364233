// SPDX-License-Identifier: Apache-2.0
// Failover of the receiver-driven protocol across the ports of a virtual NIC (docs/failover.md): the
// sender moves the traffic of a failed port's QPs to the connection's other QPs, the receiver says
// which QPs' immediates arrived for each receive in flight, and the sender writes again, on QP 0, the
// parts that did not, ending them with one replayed immediate. Once per connection, and the port stays
// out of it: this protocol does not probe a port again. Off the data path: this runs on a completion in
// error, a port failure, and the out-of-band notices.
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

uint32_t ReceiverDrivenSend::moved_work_requests(uint32_t nreqs) const {
  const size_t nqps = c_.qps().size();
  const uint64_t live = all_qps(nqps) & ~failed_qps_;
  size_t most = 0;
  for (size_t l = 0; l < nqps && l < 64; ++l) {
    if ((live >> l & 1) == 0) continue;
    size_t parts = 1;  // its own
    for (size_t q = 0; q < nqps && q < 64; ++q)
      if ((failed_qps_ >> q & 1) != 0 && failover::live_qp_for(q, failed_qps_, nqps) == l) ++parts;
    most = std::max(most, parts);
  }
  // A write per buffer and part it carries, and the write with immediate (the sizes record on QP 0),
  // with or without a sizes record.
  return static_cast<uint32_t>(most * nreqs + 1);
}

Status ReceiverDrivenSend::post_moved(Slot& s, int index) {
  const size_t nqps = c_.qps().size();
  const auto nreqs = static_cast<size_t>(s.nreqs);
  const uint64_t live = all_qps(nqps) & ~failed_qps_;
  const bool in_area = receiver_driven::needs_sizes_record(nreqs, s.reqs[0]->size);
  auto* record = static_cast<SizesSlot*>(sizes_.get()) + index;
  if (in_area)
    for (size_t i = 0; i < nreqs; ++i) (*record)[i] = static_cast<int32_t>(s.reqs[i]->size);
  int chains = 0;
  for (size_t l = 0; l < nqps && l < 64; ++l) {
    if ((live >> l & 1) == 0) continue;
    const QpLane& ql = c_.qps()[l];
    const auto lane = static_cast<size_t>(ql.lane);
    const auto rd = static_cast<size_t>(ql.remote_dev);
    std::vector<ibv_send_wr> wrs;
    std::vector<ibv_sge> sges;
    wrs.reserve(nreqs * nqps + 1);
    sges.reserve(nreqs * nqps + 1);
    // Its own part, then those of the failed QPs it carries: plain writes, before its immediate on the
    // same QP, so they have landed when the immediate completes the receive.
    for (size_t q = 0; q < nqps && q < 64; ++q)
      if (q == l || ((failed_qps_ >> q & 1) != 0 && failover::live_qp_for(q, failed_qps_, nqps) == l))
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
  mark_posted(s, chains);
  return Status::success();
}

bool ReceiverDrivenSend::on_port_lost(size_t lane) {
  const uint64_t mask = c_.lane_qps(lane);
  if (mask != 0 && (mask & ~failed_qps_) == 0) return true;  // moved already
  return start_failover(mask, "down past the QPs' retry budget");
}

bool ReceiverDrivenSend::failover_absorbs(const ibv_wc& wc) {
  if (!c_.can_fail_over()) return false;
  uint64_t path = 0;
  const size_t q = failover::completion_path(c_, wc, &path);
  if (q >= c_.qps().size()) return false;
  if ((failed_qps_ >> q & 1) == 0 && !start_failover(path, ibv::wc_status_text(wc.status))) return false;
  // A work request of a QP whose traffic moved, flushed (or failed) with it: the signalled one ends its
  // slot's chain on that QP; the others carry no wr_id.
  const uint64_t kind = wc.wr_id & kWrKindMask;
  const auto index = static_cast<size_t>(wc.wr_id & ~kWrKindMask);
  if (kind != kWrSend) return wc.wr_id == 0;
  if (index >= slots_.size()) return false;
  Slot& s = slots_[index];
  if (s.pending > 0 && --s.pending == 0 && !budget_.retired(s.wrs)) return false;
  return true;
}

bool ReceiverDrivenSend::start_failover(uint64_t mask, const std::string& cause) {
  const size_t nqps = c_.qps().size();
  // Once per connection: a second port's failure, or one while the first is agreed on, ends it.
  if (!c_.can_fail_over() || failed_qps_ != 0 || !failover::movable(mask, nqps)) return false;
  if (!c_.stop_qps(mask).ok()) return false;
  failed_qps_ = mask;
  exchange_ = Exchange::kDraining;
  // Every slot in flight is held (one more pending) until the receiver's HELD says what of it arrived.
  // Their stall budget starts again: the exchange and what it sends again must fit in it.
  const auto now = Clock::now();
  size_t held = 0;
  for (Slot& s : slots_)
    if (s.posted && s.pending > 0) {
      ++s.pending;
      s.held = true;
      s.posted_at = now;
      ++held;
    }
  log_port_finding(c_, first_qp(mask), PortNews::kFailover, "link.failover",
                   failover::moved_off_text(c_, mask, failed_qps_, cause, held, "message(s)") +
                       "; kept out until the connection closes (the receiver-driven protocol moves once and "
                       "does not probe a port again)");
  return true;
}

Status ReceiverDrivenSend::poll_notices() {
  switch (exchange_) {
    case Exchange::kDraining: return send_move_when_drained();
    case Exchange::kAwaitingHeld: return poll_held();
    case Exchange::kNone: break;
  }
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
  send_notice(c_, failover::Notice{failover::Kind::Move, 1, failed_qps_, 0, {}});
  exchange_ = Exchange::kAwaitingHeld;
  return Status::success();
}

Status ReceiverDrivenSend::post_replay(Slot& s, int index, uint64_t missing) {
  const size_t nqps = c_.qps().size();
  const QpLane& ql = c_.qps()[0];
  const auto lane = static_cast<size_t>(ql.lane);
  const auto rd = static_cast<size_t>(ql.remote_dev);
  std::vector<ibv_send_wr> wrs;
  std::vector<ibv_sge> sges;
  const auto nreqs = static_cast<size_t>(s.nreqs);
  for (size_t q = 0; q < nqps && q < 64; ++q)
    if ((missing >> q & 1) != 0)
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
  if (Status st = failover::next_notice(c_, 1, "HELD", &n); !st.ok()) return c_.fail(std::move(st));
  if (!n) return Status::success();
  if (n->kind != failover::Kind::Held || n->epoch != 1 || n->qps != failed_qps_ || n->ring_next != 0)
    return c_.fail(bad_notice(fmt::format(
        "failover notice kind {} epoch {} QPs {:#x} ring message {} when HELD of epoch 1 for QPs {:#x} "
        "was due on {}",
        static_cast<int>(n->kind), n->epoch, n->qps, n->ring_next, failed_qps_, c_.where())));
  // Each entry must be a held slot, by index and seq; its receive waits for the parts of the failed
  // QPs it lacks. The immediate of QP 0 (live) arrived: the slot's writes completed here before MOVE.
  for (const failover::PartsHeld& h : n->held) {
    const Slot* s = h.target < slots_.size() ? &slots_[h.target] : nullptr;
    if (s == nullptr || !s->held || static_cast<uint32_t>(s->seq) != h.seq || (h.parts & 1) == 0)
      return c_.fail(bad_notice(
          fmt::format("HELD names receive slot {} (seq {}, QPs {:#x} arrived), not a message this end holds "
                      "in flight, on {}",
                      h.target, h.seq, h.parts, c_.where())));
  }
  size_t replays = 0;
  for (const failover::PartsHeld& h : n->held) {
    const uint64_t missing = failed_qps_ & ~h.parts;
    if (missing == 0) continue;
    Slot& s = slots_[h.target];
    if (Status st = post_replay(s, h.target, missing); !st.ok()) return c_.fail(std::move(st));
    ++replays;
  }
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (!s.held) continue;
    s.held = false;
    if (s.pending > 0 && --s.pending == 0 && !budget_.retired(s.wrs)) return c_.fail(beyond_budget(i));
  }
  exchange_ = Exchange::kNone;
  RS_INFO(NCCL_NET,
          "NET/railscope : failover of {}: the receiver holds what arrived; the parts of {} message(s) sent "
          "again on QP 0",
          c_.where(), replays);
  return Status::success();
}

// --- receiver

Status ReceiverDrivenRecv::post_live_receives(size_t index) {
  const auto& qps = c_.qps();
  int live = 0;
  for (size_t k = 0; k < qps.size(); ++k) {
    if (k < 64 && (failed_qps_ >> k & 1) != 0) continue;
    ibv_recv_wr wr{};
    wr.wr_id = kWrRecv | recv_wr_low(k, index);
    ibv_recv_wr* bad = nullptr;
    if (int rc = ibv_post_recv(qps[k].qp.get(), &wr, &bad); rc != 0) return recv_post_failed(rc);
    ++live;
  }
  progress_[index] = Progress{live, 0};
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
  return failed_qps_ == 0 && failover::movable(mask, c_.qps().size());
}

Status ReceiverDrivenRecv::poll_notices() {
  for (;;) {
    std::optional<failover::Notice> n;
    if (Status st = failover::next_sender_notice(c_, &n); !st.ok() || !n) return st;
    if (n->kind != failover::Kind::Move)
      return bad_notice(
          fmt::format("failover notice kind {} epoch {} from the sender of a receiver-driven "
                      "connection (only MOVE is due) on {}",
                      static_cast<int>(n->kind), n->epoch, c_.where()));
    if (Status st = on_move(*n); !st.ok()) return st;
  }
}

Status ReceiverDrivenRecv::on_move(const failover::Notice& n) {
  const size_t nqps = c_.qps().size();
  if (n.epoch != 1 || failed_qps_ != 0 || !failover::movable(n.qps, nqps))
    return bad_notice(fmt::format("MOVE of epoch {} for QPs {:#x} when {} on {}", n.epoch, n.qps,
                                  failed_qps_ != 0 ? "its QPs moved already" : "epoch 1 leaving QP 0 was due",
                                  c_.where()));
  if (Status st = c_.stop_qps(n.qps); !st.ok()) return st;
  failed_qps_ = n.qps;
  // A failed QP's standing receives flush after every arrival on it completed: once each QP with one
  // showed a flushed one, every immediate that made it through is counted. The sender sent MOVE once
  // every write it posted completed there, so what arrived on the live QPs is in the queues too.
  bool waiting = false;
  for (const RecvSlot& r : c_.slots()) waiting = waiting || r.in_use;
  const auto deadline = Clock::now() + std::chrono::milliseconds(500);
  while (waiting) {
    if (Status st = c_.poll(); !st.ok()) return st;
    if ((flushed_ & n.qps) == n.qps || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  const uint64_t live = all_qps(nqps) & ~failed_qps_;
  failover::Notice held{failover::Kind::Held, 1, n.qps, 0, {}};
  for (size_t index = 0; index < progress_.size(); ++index) {
    Progress& p = progress_[index];
    if (!c_.slots()[index].in_use || p.pending <= 0) continue;
    // The receive's seq: the one of the last kCtsSlots whose slot this is.
    const uint64_t seq = tail_ - ((tail_ - 1 - index) % static_cast<uint64_t>(kCtsSlots));
    if (p.arrived == 0) {
      // Not written yet: the sender writes it over the live QPs, each ending with its immediate.
      p.pending = std::popcount(live);
    } else {
      const uint64_t missing = n.qps & ~p.arrived;
      p.pending = std::popcount(live & ~p.arrived) + (missing != 0 ? 1 : 0);
      if (missing != 0) {
        // The parts written again end with one immediate on QP 0.
        ibv_recv_wr wr{};
        wr.wr_id = kWrRecv | recv_wr_low(0, index);
        ibv_recv_wr* bad = nullptr;
        if (int rc = ibv_post_recv(c_.qps()[0].qp.get(), &wr, &bad); rc != 0) return recv_post_failed(rc);
        p.replay_due = true;
      }
      held.held.push_back(
          {static_cast<uint16_t>(index), static_cast<uint32_t>(seq), p.arrived & all_qps(nqps)});
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

}  // namespace railscope::net::verbs
