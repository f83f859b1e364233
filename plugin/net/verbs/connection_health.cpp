// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/connection_health.h"

#include <fmt/format.h>

#include <string_view>
#include <thread>

#include "plugin/net/verbs/qp_set.h"
#include "plugin/net/verbs/setup/discovery.h"
#include "plugin/net/verbs/setup/link_params.h"
#include "plugin/net/verbs/setup/oob_channel.h"
#include "railscope/ibv/ibv.h"

namespace railscope::net::verbs {

void ConnectionHealth::watch_ports(const std::vector<Lane>& lanes) {
  ports_.clear();
  for (const Lane& lane : lanes) ports_.push_back({lane.health, lane.health->generation()});
  solo_ = ports_.size() == 1 ? &ports_[0] : nullptr;
}

const PortHealth* ConnectionHealth::failed_port() const {
  for (const auto& p : ports_)
    if (p.health->generation() != p.generation) return p.health;
  return nullptr;
}

bool ConnectionHealth::record(Status st) {
  if (!error_.ok()) return false;
  error_ = std::move(st);
  return true;
}

void ConnectionHealth::note_failed_completion(size_t lane, const ibv_wc& wc) {
  if (!error_.ok() || wc.status == IBV_WC_SUCCESS) return;
  failed_.status = static_cast<int>(wc.status);
  failed_.vendor_err = wc.vendor_err;
  failed_.qpn = wc.qp_num;
  failed_.lane = lane;
}

const QpLane& ConnectionHealth::failed_qp(const std::vector<Lane>& lanes,
                                          const std::vector<QpLane>& qps) const {
  // A completion error: the QP it names, on the lane whose CQ it came from.
  if (failed_.status != 0)
    for (const auto& q : qps)
      if (static_cast<size_t>(q.lane) == failed_.lane && q.qp->qp_num == failed_.qpn) return q;
  // A port that went down under the connection: its first QP.
  for (const auto& q : qps) {
    const auto l = static_cast<size_t>(q.lane);
    const Lane& lane = lanes[l];
    if (lane.health != nullptr && (port_failed(l) || lane.health->is_down())) return q;
  }
  return qps[0];  // a stall, a dead peer, a bad peer message: the connection's first QP
}

bool ConnectionHealth::liveness_due(Clock::time_point now) {
  if (now < next_liveness_) return false;
  next_liveness_ = now + std::chrono::milliseconds(100);
  return true;
}

void ConnectionHealth::attach(std::vector<Lane>& lanes, const LinkParams& link) {
  stall_budget_ = retry_budget(link.timeout, link.retry_cnt);
  timeout_ = link.timeout;
  retry_cnt_ = link.retry_cnt;
  for (auto& lane : lanes) {
    if (lane.path_mtu == 0) continue;  // no QP on this lane
    lane.health->attach(lane.path_mtu, link.timeout, link.retry_cnt, stall_budget_);
    lane.attached = true;
  }
}

void ConnectionHealth::detach(std::vector<Lane>& lanes) {
  for (auto& lane : lanes)
    if (lane.attached) {
      if (lane.movable) lane.health->detach_movable();
      lane.movable = false;
      lane.health->detach();
      lane.attached = false;
    }
}

// A send whose data is posted but not acknowledged within the QP's retry budget is an error, before
// the hardware's own retries end (rxe at NCCL_IB_RETRY_CNT=7 never gives up).
Status ConnectionHealth::stalled(size_t bytes, Clock::duration waited, Clock::duration idle,
                                 const std::string& where) const {
  const double waited_s = std::chrono::duration<double>(waited).count();
  const double idle_s = std::chrono::duration<double>(idle).count();
  return Status::fail(
      ncclRemoteError, "progress.stalled",
      fmt::format(
          "a {}-byte send posted {:.1f} s ago has not completed{} (budget {:.1f} s: 4.096 us x 2^{} x "
          "{} tries, at least {} s) on {}",
          bytes, waited_s,
          idle < waited ? fmt::format(", and no send of the connection completed for {:.1f} s", idle_s)
                        : std::string(),
          std::chrono::duration<double>(stall_budget_).count(), timeout_, retry_cnt_ + 1,
          std::chrono::duration_cast<std::chrono::seconds>(kMinStallBudget).count(), where),
      "The peer stopped acknowledging: check that the peer process is alive, the link is up on both ends "
      "and the "
      "netdev MTUs match (`railscope doctor` on both nodes)");
}

namespace {
// Completion errors a peer that died (and took its registrations and QPs with it) causes on our side.
bool peer_death_can_cause(std::string_view id) {
  return id == "wc.remote_access" || id == "wc.remote_invalid" || id == "wc.retry_exceeded" ||
         id == "wc.rnr_retry_exceeded" || id == "wc.error";
}
}  // namespace

std::optional<Status> ConnectionHealth::port_cause(const Status& st, const std::vector<Lane>& lanes) const {
  // A port failure already recorded: the completion error is its consequence.
  if (const PortHealth* failed = failed_port()) {
    auto f = failed->last();
    f.detail += fmt::format("; then {}", st.finding().detail);
    return Status::fail(ncclSystemError, std::move(f));
  }
  // The link went down during this connection (IBV_EVENT_PORT_ERR): still down, it is the cause;
  // back up, the completion error keeps its id and says when the link went down.
  for (const auto& lane : lanes) {
    const auto down_at = lane.health->last_down();
    if (down_at < opened_) continue;
    const double ago = std::chrono::duration<double>(Clock::now() - down_at).count();
    const std::string port = fmt::format("{}:{}", lane.port->dev_name, lane.port->port);
    if (lane.health->is_down())
      return Status::fail(
          ncclSystemError, "async.port_error",
          fmt::format("{} went down at {} ({:.1f} s ago, IBV_EVENT_PORT_ERR) and is still down; "
                      "then {}",
                      port, lane.health->last_down_text(), ago, st.finding().detail));
    Status out = st;
    out.finding().detail += fmt::format("; the link {} went down at {} ({:.1f} s before this error)", port,
                                        lane.health->last_down_text(), ago);
    return out;
  }
  // The port may have gone down before its async event was read: ask the device directly.
  for (const auto& lane : lanes) {
    ibv_port_attr attr{};
    if (ibv::query_port(*ibv::api(), lane.port->ctx.get(), static_cast<uint8_t>(lane.port->port), &attr) ==
            0 &&
        attr.state != IBV_PORT_ACTIVE)
      return Status::fail(
          ncclSystemError, "async.port_error",
          fmt::format("{}:{} is {} (link down); then {}", lane.port->dev_name, lane.port->port,
                      ibv::port_state_text(attr.state), st.finding().detail));
  }
  return std::nullopt;
}

Status ConnectionHealth::explain(Status st, const std::vector<Lane>& lanes, Channel& oob) const {
  // Causes show up a moment after their consequences. A netdev going down fails the QP's sends
  // ("local QP operation error") before the port turns DOWN and its async event arrives; a peer
  // process that dies releases its registrations and QPs as its files close, so our next write can
  // fail (remote access error, retries) before its out-of-band socket reads as closed. Give the
  // cause that moment (error path only, once per connection: at most 500 ms) and name it first.
  const bool peer_may_cause = peer_death_can_cause(st.finding().id());
  const auto deadline = Clock::now() + std::chrono::milliseconds(500);
  for (;;) {
    if (auto cause = port_cause(st, lanes)) return std::move(*cause);
    if (peer_may_cause) {
      if (Status closed = oob.alive(); !closed.ok()) {
        closed.finding().detail += fmt::format("; then {}", st.finding().detail);
        return closed;
      }
    }
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return st;
}

}  // namespace railscope::net::verbs
