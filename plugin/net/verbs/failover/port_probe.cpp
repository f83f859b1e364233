// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/failover/port_probe.h"

#include <fmt/format.h>

#include <algorithm>

#include "plugin/net/verbs/failover/connection_notices.h"
#include "railscope/core/log.h"
#include "railscope/core/params.h"

namespace railscope::net::verbs::failover {

bool PortProbe::strike(uint64_t mask, Clock::time_point now) {
  if (strikes_.empty()) {
    const auto limit = static_cast<int>(params::get_int("RAILSCOPE_NET_FAILOVER_LIMIT"));
    for (size_t l = 0; l < c_.lanes().size(); ++l) strikes_.emplace_back(limit, std::chrono::seconds(1));
  }
  bool kept_out = false;
  const uint64_t lanes = c_.qp_lanes(mask);
  for (size_t l = 0; l < strikes_.size() && l < kMaxDevsPerEnd; ++l)
    if ((lanes >> l & 1) != 0) kept_out = strikes_[l].failed(now) || kept_out;
  return kept_out;
}

bool PortProbe::left(uint64_t mask, Clock::time_point now) {
  const uint64_t lanes = c_.qp_lanes(mask);
  for (size_t l = 0; l < kMaxDevsPerEnd; ++l)
    if ((lanes >> l & 1) != 0) out_since_[l] = now;
  return strike(mask, now);
}

int PortProbe::failures(size_t q) const {
  const auto lane = static_cast<size_t>(c_.qps()[q].lane);
  return lane < strikes_.size() ? strikes_[lane].failures() : 0;
}

double PortProbe::seconds_out(size_t q, Clock::time_point now) const {
  const auto lane = static_cast<size_t>(c_.qps()[q].lane);
  return std::chrono::duration<double>(now - out_since_[lane % kMaxDevsPerEnd]).count();
}

void PortProbe::start(uint64_t failed, uint32_t* epoch, Clock::time_point now) {
  uint64_t mask = 0;
  for (size_t q = 0; q < c_.qps().size() && q < kMaxQps; ++q) {
    if ((failed >> q & 1) == 0) continue;
    const auto lane = static_cast<size_t>(c_.qps()[q].lane);
    if (lane < strikes_.size() && !c_.lane_down(lane) && strikes_[lane].may_probe(now))
      mask |= uint64_t{1} << q;
  }
  if (mask == 0) return;
  if (Status st = c_.restart_qps(mask); !st.ok()) {
    // The port is not usable yet (its GID or path not back): it counts as a failed probe.
    RS_INFO(NCCL_NET, "NET/railscope : probe of port {} on {} not started: {}", c_.qp_port(first_qp(mask)),
            c_.where(), st.finding().detail);
    (void)c_.stop_qps(mask);
    strike(mask, now);
    return;
  }
  ++*epoch;
  qps_ = mask;
  step_ = Step::kAwaitingAnswer;
  // The receiver answers at its own liveness checks; a receiver that does not is no failure: traffic
  // stays on the other ports, and the port is probed again after its backoff.
  deadline_ = now + std::max<Clock::duration>(c_.stall_budget(), std::chrono::seconds(10));
  send_notice(c_, Notice{Kind::Probe, *epoch, mask, 0, {}});
  RS_INFO(NCCL_NET, "NET/railscope : port {} is ACTIVE again: QPs {:#x} of {} restarted and probed",
          c_.qp_port(first_qp(mask)), mask, c_.where());
}

Status PortProbe::progress(uint32_t epoch, uint64_t failed, bool* passed) {
  *passed = false;
  if (step_ == Step::kNone) return Status::success();
  if (Clock::now() > deadline_) {
    // An answer to PROBE may still come: the epoch is not reused, and the connection goes on without
    // the port.
    give_up(step_ == Step::kProbing ? "the probe writes did not complete in time"
                                    : "the receiver did not answer the probe",
            failed);
    return Status::success();
  }
  if (step_ == Step::kProbing) return Status::success();  // the writes complete through the drains
  std::optional<Notice> n;
  if (Status st = next_notice(c_, epoch, "the answer to PROBE", &n); !st.ok()) return c_.fail(std::move(st));
  if (!n) return Status::success();
  if (n->kind != Kind::Probe || n->epoch != epoch || n->qps != qps_)
    return c_.fail(
        bad_notice(fmt::format("failover notice kind {} epoch {} QPs {:#x} when the answer to "
                               "PROBE of epoch {} for QPs {:#x} was due on {}",
                               static_cast<int>(n->kind), n->epoch, n->qps, epoch, qps_, c_.where())));
  // Both ends' QPs are in RTS: a zero-byte write on each, signalled, completes only if the path carries
  // it both ways (the write and its acknowledgement).
  step_ = Step::kProbing;
  writes_left_ = qps_;
  writes_ok_ = true;
  deadline_ = Clock::now() + std::max<Clock::duration>(c_.stall_budget(), std::chrono::seconds(2));
  for (size_t q = 0; q < c_.qps().size() && q < kMaxQps; ++q) {
    if ((qps_ >> q & 1) == 0) continue;
    const QpLane& ql = c_.qps()[q];
    ibv_send_wr wr{};
    wr.wr_id = kWrProbe | q;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = c_.remote().addr;
    wr.wr.rdma.rkey = c_.remote().devs[static_cast<size_t>(ql.remote_dev)].rkey;
    ibv_send_wr* bad = nullptr;
    if (ibv_post_send(ql.qp.get(), &wr, &bad) != 0) {
      give_up("a probe write could not be posted", failed);
      return Status::success();
    }
  }
  return Status::success();
}

Status PortProbe::on_write_done(size_t q, bool ok, uint64_t failed, bool* passed) {
  *passed = false;
  if (step_ != Step::kProbing || q >= kMaxQps || (writes_left_ >> q & 1) == 0)
    return ok ? Status::fail(ncclInternalError, "internal.bad_argument",
                             fmt::format("unexpected probe completion of QP {} on {}", q, c_.where()))
              : Status::success();  // flushed after the probe was given up
  writes_left_ &= ~(uint64_t{1} << q);
  writes_ok_ = writes_ok_ && ok;
  if (writes_left_ != 0) return Status::success();
  if (!writes_ok_) {
    give_up("a probe write failed", failed);
    return Status::success();
  }
  *passed = true;
  return Status::success();
}

void PortProbe::restored() {
  const uint64_t lanes = c_.qp_lanes(qps_);
  for (size_t l = 0; l < strikes_.size(); ++l)
    if ((lanes >> l & 1) != 0) strikes_[l].restored();
  step_ = Step::kNone;
}

bool PortProbe::give_up(const char* why, uint64_t failed) {
  const uint64_t mask = qps_;
  step_ = Step::kNone;
  writes_left_ = 0;
  (void)c_.stop_qps(mask);  // what is still posted on them flushes; on_write_done ignores it
  const bool kept_out = strike(mask, Clock::now());
  if (kept_out)
    log_port_finding(c_, first_qp(mask), PortNews::kFailover, "link.failover",
                     fmt::format("port {} of connection {} failed its probe ({}): failure {} on this "
                                 "connection, kept out until the connection closes; traffic stays on {}",
                                 c_.qp_port(first_qp(mask)), c_.where(), why, failures(first_qp(mask)),
                                 c_.live_ports(failed)));
  else
    RS_INFO(NCCL_NET, "NET/railscope : port {} of connection {} failed its probe ({}); probed again later",
            c_.qp_port(first_qp(mask)), c_.where(), why);
  return kept_out;
}

}  // namespace railscope::net::verbs::failover
