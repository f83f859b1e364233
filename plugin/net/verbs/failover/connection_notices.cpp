// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/failover/connection_notices.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <string_view>

#include "plugin/net/verbs/failover/failover_policy.h"
#include "plugin/net/verbs/watch/port_health.h"
#include "railscope/core/diagnosis.h"
#include "railscope/core/log.h"

namespace railscope::net::verbs::failover {

Status bad_notice(std::string text) {
  return Status::fail(ncclRemoteError, "peer.bad_handshake", std::move(text));
}

namespace {

// The next message on the channel, which must be a notice: decoded once (*out; nullopt when none came).
// `context` says when it came, for the error.
Status receive_notice(Connection& c, std::string_view context, std::optional<Notice>* out) {
  out->reset();
  std::optional<Message> m;
  if (Status st = c.oob().receive(&m); !st.ok()) return st;
  if (!m) return Status::success();
  if (m->type != MessageType::Failover)
    return bad_notice(fmt::format("out-of-band message of type {} {} on {}", static_cast<int>(m->type),
                                  context, c.where()));
  std::string why;
  *out = decode(m->failover, c.qps().size(), &why);  // the one copy used
  if (!*out) return bad_notice(fmt::format("{} on {}", why, c.where()));
  return Status::success();
}

// The health of QP q's local port; its callers accept a lane without one.
PortHealth* port_of(const Connection& c, size_t q) {
  return c.lanes()[static_cast<size_t>(c.qps()[q].lane)].health;
}

}  // namespace

void send_notice(Connection& c, const Notice& n) {
  Message m;
  m.type = MessageType::Failover;
  m.failover = encode(n);
  c.oob().send(m);
  bool done = false;
  // A few bytes into a socket idle since the handshake: the kernel takes them at once; what it does
  // not is written by the next flush (poll_held, or the next notice).
  (void)c.oob().flush(&done);
}

void log_port_finding(const Connection& c, size_t q, PortNews news, const char* id, std::string text) {
  PortHealth* health = port_of(c, q);
  const bool first = health == nullptr ||
                     (news == PortNews::kFailover ? health->first_failover_finding(Connection::Clock::now())
                                                  : health->first_recovery_finding());
  if (first) {
    text += news == PortNews::kFailover
                ? " (this process's other connections on the port log theirs at INFO)"
                : " (this process's other connections on the port, and its port watcher, log theirs at INFO)";
    RS_WARN("NET/railscope : {}", diag::one_line(diag::make(id, std::move(text))));
  } else {
    RS_INFO(NCCL_NET, "NET/railscope : {}", diag::one_line(diag::make(id, std::move(text))));
  }
}

Status next_notice(Connection& c, uint32_t epoch, const char* due, std::optional<Notice>* out) {
  bool flushed = false;
  if (Status st = c.oob().flush(&flushed); !st.ok()) return st;
  const std::string context = fmt::format("when {} was due", due);
  for (;;) {
    if (Status st = receive_notice(c, context, out); !st.ok() || !*out) return st;
    if ((*out)->kind != Kind::Probe || (*out)->epoch >= epoch) return Status::success();
  }
}

Status next_sender_notice(Connection& c, std::optional<Notice>* out) {
  Status st = receive_notice(c, "during the transfer", out);
  return !st.ok() && st.finding().id() == "peer.closed" ? Status::success() : st;
}

Connection::Clock::duration exchange_budget(const Connection& c) {
  return c.stall_budget() + std::max<Connection::Clock::duration>(c.stall_budget(), std::chrono::seconds(10));
}

Status exchange_check(Connection& c, Connection::Clock::time_point since, Connection::Clock::time_point now,
                      const char* waiting_for) {
  if (now - since <= exchange_budget(c)) return Status::success();
  return c.fail(Status::fail(
      ncclRemoteError, "progress.stalled",
      fmt::format("failover of {}: {} has not come {:.1f} s into the exchange (budget {:.1f} s: the QPs' "
                  "retry budget to drain, then that budget or 10 s, whichever is longer, for the receiver's "
                  "answer)",
                  c.where(), waiting_for, std::chrono::duration<double>(now - since).count(),
                  std::chrono::duration<double>(exchange_budget(c)).count()),
      "The receiver answers while its posted receives are tested (NCCL's proxy does so): check that the "
      "peer process is alive and progressing, and that its ports are up (`railscope doctor`)"));
}

size_t first_qp(uint64_t mask) { return static_cast<size_t>(std::countr_zero(mask)); }

size_t completion_path(const Connection& c, const ibv_wc& wc, uint64_t* path) {
  const size_t lane = c.completion_lane();
  const size_t q = c.qp_index(lane, wc.qp_num);
  if (q >= c.qps().size() || q >= kMaxQps) return c.qps().size();
  *path = c.lane_qps(lane) &
          remote_dev_qps(static_cast<size_t>(c.qps()[q].remote_dev), c.remote().devs.size(), c.qps().size());
  return q;
}

std::string moved_off_text(const Connection& c, uint64_t mask, uint64_t failed, const std::string& cause,
                           size_t in_flight, const char* messages) {
  const size_t nqps = c.qps().size();
  const auto live = static_cast<size_t>(nqps - static_cast<size_t>(std::popcount(failed)));
  return fmt::format(
      "port {} of connection {} failed ({}) {}: its QPs {:#x} stopped; traffic moves to {} ({} of {} QPs, "
      "about "
      "{}% of the connection's bandwidth), {} {} in flight checked with the receiver",
      c.qp_port(first_qp(mask)), c.where(), cause, failure_time(c, first_qp(mask)), mask,
      c.live_ports(failed), live, nqps, live * 100 / nqps, in_flight, messages);
}

std::string failure_time(const Connection& c, size_t q) {
  const PortHealth* port = port_of(c, q);
  if (port != nullptr && port->is_down())
    return fmt::format("at {} (its link went down at {})", wall_clock_now(), port->last_down_text());
  return fmt::format("at {}", wall_clock_now());
}

std::string failures_text(bool kept_out, int failures) {
  return kept_out
             ? fmt::format("; its failure {} on this connection: kept out until the connection closes",
                           failures)
             : fmt::format("; failure {}: traffic returns once the port is ACTIVE again and passes a probe",
                           failures);
}

void log_sender_recovered(const Connection& c, uint64_t mask, double out_for, uint64_t failed) {
  log_port_finding(
      c, first_qp(mask), PortNews::kRecovered, "link.recovered",
      fmt::format("port {} of connection {} passed its probe after {:.1f} s without traffic: QPs "
                  "{:#x} carry traffic again, over {}",
                  c.qp_port(first_qp(mask)), c.where(), out_for, mask, c.live_ports(failed)));
}

void log_receiver_recovered(const Connection& c, uint64_t qps, uint64_t failed) {
  log_port_finding(
      c, first_qp(qps), PortNews::kRecovered, "link.recovered",
      fmt::format("the sender of connection {} probed QPs {:#x} (this end's port {}): traffic is "
                  "back on them, over {}",
                  c.where(), qps, c.qp_port(first_qp(qps)), c.live_ports(failed)));
}

}  // namespace railscope::net::verbs::failover
