// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/connection.h"

#include <fmt/format.h>

#include "plugin/net/verbs/failover/failover_policy.h"
#include "plugin/net/verbs/setup/mr_cache.h"
#include "railscope/core/log.h"
#include "railscope/core/params.h"
#include "railscope/ibv/ibv.h"
#include "railscope/node/mtu.h"

namespace railscope::net::verbs {

VerbsMr::~VerbsMr() {
  for (int i = 0; i < ndevs; ++i)
    if (cache[i] != nullptr) cache[i]->release(token[i]);
}

Connection::~Connection() { ConnectionHealth::detach(qps_.lanes()); }

Status Connection::open_lanes(const std::vector<const NetPort*>& ports,
                              const std::vector<PortHealth*>& health, const std::vector<MrCache*>& caches) {
  qps_.open(ports, health, caches);
  health_.watch_ports(qps_.lanes());
  return Status::success();
}

Status Connection::connect_qps(const std::vector<uint32_t>& remote_qpns) {
  if (Status st = qps_.connect(remote_qpns, local_, remote_, link_, oob_.peer(), where(), &path_mtu_);
      !st.ok())
    return st;
  remote_qpns_ = remote_qpns;
  telemetry_.start(qps_.lanes());
  health_.attach(qps_.lanes(), link_);
  failover::Eligibility e;
  e.enabled = params::get_bool("RAILSCOPE_NET_FAILOVER");
  e.offered = failover_offered_;
  e.nqps = qps_.qps().size();
  e.nlanes = qps_.lanes().size();
  e.remote_devs = remote_.devs.size();
  std::string why;
  can_fail_over_ = failover::eligible(e, &why);
  // The ports whose failure this connection outlives: all but the ring QP's (failover_policy.h).
  if (can_fail_over_)
    for (size_t l = 0; l < qps_.lanes().size(); ++l)
      if (Lane& lane = qps_.lanes()[l]; lane.attached && (lane_qps(l) & failover::kRingQp) == 0) {
        lane.health->attach_movable();
        lane.movable = true;
      }
  if (!why.empty())
    RS_INFO(NCCL_NET, "NET/railscope : connection {} cannot move its traffic off a failed port: {}", where(),
            why);
  return Status::success();
}

size_t Connection::qp_index(size_t lane, uint32_t qpn) const {
  const auto& qps = qps_.qps();
  for (size_t q = 0; q < qps.size(); ++q)
    if (static_cast<size_t>(qps[q].lane) == lane && qps[q].qp && qps[q].qp->qp_num == qpn) return q;
  return qps.size();
}

uint64_t Connection::lane_qps(size_t lane) const {
  return failover::lane_qps(lane, qps_.lanes().size(), qps_.qps().size());
}

Status Connection::stop_qps(uint64_t mask) {
  for (size_t q = 0; q < qps_.qps().size() && q < failover::kMaxQps; ++q)
    if ((mask >> q & 1) != 0)
      if (Status st = qps_.move_to(q, IBV_QPS_ERR, where()); !st.ok()) return st;
  return Status::success();
}

uint64_t Connection::qp_lanes(uint64_t mask) const {
  uint64_t lanes = 0;
  for (size_t q = 0; q < qps_.qps().size() && q < failover::kMaxQps; ++q)
    if ((mask >> q & 1) != 0) lanes |= uint64_t{1} << (static_cast<size_t>(qps_.qps()[q].lane) & 63);
  return lanes;
}

bool Connection::lane_down(size_t lane) const {
  return lane < qps_.lanes().size() && qps_.lanes()[lane].health->is_down();
}

std::string Connection::qp_port(size_t q) const {
  if (q >= qps_.qps().size()) return "?";
  const auto lane = static_cast<size_t>(qps_.qps()[q].lane);
  if (lane >= local_.devs.size()) return "?";
  return fmt::format("{}:{}", local_.devs[lane].record.dev_name, local_.devs[lane].record.port);
}

std::string Connection::live_ports(uint64_t failed) const {
  std::string out;
  std::vector<bool> seen(qps_.lanes().size(), false);
  for (size_t q = 0; q < qps_.qps().size() && q < failover::kMaxQps; ++q) {
    const auto lane = static_cast<size_t>(qps_.qps()[q].lane);
    if ((failed & (uint64_t{1} << q)) != 0 || lane >= seen.size() || seen[lane]) continue;
    seen[lane] = true;
    out += (out.empty() ? "" : "+") + qp_port(q);
  }
  return out;
}

EndInfo Connection::local_end(const std::vector<uint32_t>& rkeys_per_lane, uint64_t addr) const {
  EndInfo e = local_;
  for (size_t i = 0; i < e.devs.size() && i < rkeys_per_lane.size(); ++i) e.devs[i].rkey = rkeys_per_lane[i];
  e.addr = addr;
  e.qpns = qpns();
  return e;
}

bool Connection::drain_all_cqs() {
  if (!health_.ok()) return false;
  DrainSink<Connection> sink{*this, *this};
  return qps_.drain_all(sink);
}

bool Connection::poll_failed() {
  fail(Status::fail(ncclSystemError, "wc.error", fmt::format("ibv_poll_cq failed on {}", where())));
  return false;
}

bool Connection::completion_failed(size_t lane, const ibv_wc& wc, Status st) {
  health_.note_failed_completion(lane, wc);
  fail(health_.explain(std::move(st), qps_.lanes(), oob_));
  return false;
}

Status Connection::health_failure() {
  if (!health_.ok()) return health_.error();
  for (size_t lane = 0; lane < qps_.lanes().size(); ++lane) {
    if (!health_.port_failed(lane)) continue;
    // A port whose traffic the protocol moved elsewhere (docs/failover.md) no longer fails the connection.
    if (can_fail_over_ && on_port_lost(lane)) {
      moved_lanes_ |= uint64_t{1} << (lane & 63);
      health_.accept_port_failure(lane);
      continue;
    }
    auto f = qps_.lanes()[lane].health->last();
    f.detail += fmt::format("; connection {}", where());
    return fail(Status::fail(ncclSystemError, std::move(f)));
  }
  return Status::success();
}

Status Connection::watch(Clock::time_point now) {
  if (Status st = health(); !st.ok()) return st;
  if (telemetry_.line_due(now)) emit_stats(role_, false);
  if (health_.liveness_due(now)) {
    if (can_fail_over_)
      if (Status st = poll_notices(); !st.ok()) return fail(std::move(st));
    if (Status st = oob_.alive(); !st.ok()) {
      if (Status p = poll(); !p.ok()) return p;  // a completion error explains more than the close
      st.finding().detail += fmt::format("; connection {}", where());
      return fail(std::move(st));
    }
  }
  return Status::success();
}

Status Connection::stall_check(size_t bytes, Clock::time_point posted_at) {
  const auto now = Clock::now();
  if (done_from_ != seen_from_) {
    seen_from_ = done_from_;
    progressed_at_ = now;
  }
  // A port of the connection that went down is the stall's cause (async.port_error, naming it), not the
  // peer: explain looks for it as it does for a completion error.
  const auto since = seen_from_ <= posted_at ? std::max(posted_at, progressed_at_) : posted_at;
  if (now - since > health_.stall_budget()) {
    // A port of the connection down past the budget: its traffic moves to the others when it can.
    if (can_fail_over_ && move_off_down_ports()) return watch(now);
    return fail(
        health_.explain(health_.stalled(bytes, now - posted_at, now - since, where()), qps_.lanes(), oob_));
  }
  return watch(now);
}

bool Connection::move_off_down_ports() {
  bool moved = false;
  for (size_t lane = 0; lane < qps_.lanes().size() && lane < 64; ++lane) {
    if ((moved_lanes_ >> lane & 1) != 0 || !qps_.lanes()[lane].health->is_down()) continue;
    if (!on_port_lost(lane)) return false;
    moved_lanes_ |= uint64_t{1} << lane;
    moved = true;
  }
  return moved;
}

Status Connection::fail(Status st) {
  if (health_.record(std::move(st))) {
    stats().error(health_.error().finding().id());
    if (telemetry_.profiler_on()) profile_in_flight_failure();
  }
  return health_.error();
}

std::string Connection::where() const {
  std::string l, r;
  for (const auto& [d, rkey] : local_.devs)
    l += fmt::format("{}{}:{} GID[{}] {}", l.empty() ? "" : "+", d.dev_name, d.port, d.gid_index,
                     d.gid.to_string());
  for (const auto& [d, rkey] : remote_.devs)
    r += fmt::format("{}{}:{} GID[{}] {}", r.empty() ? "" : "+", d.dev_name, d.port, d.gid_index,
                     d.gid.to_string());
  return fmt::format("{} {} -> peer {} {} ({})", local_.host, l, remote_.host.empty() ? "?" : remote_.host,
                     r.empty() ? "?" : r, oob_.peer());
}

void Connection::profile_failure(size_t request, void* phandle, size_t bytes) {
  if (!telemetry_.profiler_on() || phandle == nullptr || qps_.qps().empty()) return;
  profile_stop(request);
  const ConnectionHealth::FailedCompletion& wc = health_.failed_completion();
  telemetry_.failure_event(phandle, health_.failed_qp(qps_.lanes(), qps_.qps()), bytes, wc.status,
                           wc.vendor_err, health_.error().finding().id().data());
}

void Connection::emit_stats(const char* stats_role, bool final) {
  if (!stats_enabled()) return;
  ConnIdentity who;
  who.role = stats_role;
  who.final = final;
  who.local_host = local_.host;
  for (const auto& d : local_.devs) who.local_dev += (who.local_dev.empty() ? "" : "+") + d.record.dev_name;
  if (!local_.devs.empty()) who.local_gid = local_.devs[0].record.gid.to_string();
  who.peer_host = remote_.host;
  for (const auto& d : remote_.devs) who.peer_dev += (who.peer_dev.empty() ? "" : "+") + d.record.dev_name;
  if (!remote_.devs.empty()) who.peer_gid = remote_.devs[0].record.gid.to_string();
  who.peer_addr = oob_.peer();
  who.qps = static_cast<int>(qps_.qps().size());
  who.path_mtu = path_mtu_;
  who.seconds = std::chrono::duration<double>(Clock::now() - health_.opened()).count();
  telemetry_.emit(std::move(who), qps_.lanes());
}

Status register_on_lanes(Connection& c, void* data, size_t size, int type, VerbsMr** out) {
  if (type != NCCL_PTR_HOST)
    return Status::fail(
        ncclInvalidArgument, "reg.failed",
        fmt::format("regMr of {} bytes with pointer type {:#x}: not host memory (NCCL_PTR_HOST); GPU memory "
                    "is registered as NCCL_PTR_CUDA or through regMrDmaBuf",
                    size, type),
        "Pass NCCL_PTR_HOST or NCCL_PTR_CUDA as the pointer type");
  auto mr = std::make_unique<VerbsMr>();
  for (const auto& lane : c.lanes()) {
    int i = mr->ndevs;
    if (Status st = lane.mr_cache->acquire(data, size, &mr->mr[i], &mr->token[i]); !st.ok()) return st;
    mr->cache[i] = lane.mr_cache;
    mr->ndevs = i + 1;
  }
  *out = mr.release();
  return Status::success();
}

}  // namespace railscope::net::verbs
