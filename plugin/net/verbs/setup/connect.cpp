// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/setup/connect.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "plugin/net/common/socket.h"
#include "plugin/net/verbs/eager/eager_queues.h"
#include "plugin/net/verbs/receiver_driven/receiver_driven.h"
#include "plugin/net/verbs/setup/discovery.h"
#include "plugin/net/verbs/setup/qos_agreement.h"
#include "plugin/net/verbs/setup/qp.h"
#include "railscope/core/log.h"
#include "railscope/core/params.h"
#include "railscope/node/mtu.h"

namespace railscope::net::verbs {
namespace {

// Completion queue entries per lane, once the protocol is agreed. Each protocol's queues are sized by
// what it lets be in flight (eager_queues.h, receiver_driven_queues.h), and its CQ holds a completion
// for every work request they can hold. create_cq clamps to the device's limit.
int cq_entries(bool eager, size_t qps_per_lane) {
  return eager ? eager::cq_depth(qps_per_lane) : receiver_driven::cq_depth(qps_per_lane);
}

// Eager protocol: ring writes (credit-bounded), data parts and closeSend's write on the sender; on the
// receiver, standing receives for ring messages and data parts, and control writes (eager_queues.h).
// Receiver-driven: the data writes of matched slots on the sender; on the receiver, one standing
// receive per receive in flight and the clear-to-send writes (receiver_driven_queues.h).
QpCaps sender_caps(bool eager) {
  if (eager) return QpCaps{eager::kSenderSendDepth, 4, 256};
  return QpCaps{receiver_driven::kSenderSendDepth, receiver_driven::kSenderRecvDepth, 64};
}
QpCaps receiver_caps(bool eager) {
  if (eager) return QpCaps{eager::kControlDepth, eager::kReceiverRecvDepth, 128};
  return QpCaps{receiver_driven::kCtsDepth, receiver_driven::kReceiverRecvDepth, 128};
}

// What this end offers for the eager protocol: RAILSCOPE_NET_EAGER_MAX where every port carries host
// memory only (the protocol copies payloads with the CPU), else 0.
uint32_t eager_offer(const LocalDevice& dev) {
  if (dev.ports.size() > static_cast<size_t>(eager::kMaxDevs)) return 0;  // eager.h: 4 rkeys per entry
  for (const auto* p : dev.ports)
    if (p->gdr.ptr_support != NCCL_PTR_HOST) return 0;
  return static_cast<uint32_t>(params::get_int("RAILSCOPE_NET_EAGER_MAX"));
}

std::string protocol_text(uint32_t eager_max) {
  return eager_max > 0 ? fmt::format("eager up to {} B", eager_max) : std::string("receiver-driven");
}

EndInfo describe_local(const LocalDevice& dev, const LinkParams& link) {
  EndInfo e;
  e.host = dev.host;
  for (const NetPort* p : dev.ports) e.devs.push_back({*p, 0});
  e.qps_per_conn = static_cast<uint8_t>(std::clamp(link.qps_per_conn, 1, kMaxQpsPerConn));
  e.traffic_class = static_cast<uint8_t>(link.traffic_class);
  e.service_level = static_cast<uint8_t>(link.service_level);
  e.eager_max = eager_offer(dev);
  return e;
}

bool is_roce(const EndInfo& e) {
  return !e.devs.empty() && e.devs[0].record.link_layer == node::LinkLayer::Ethernet;
}

Status timed_out(const std::string& peer, const char* stage) {
  return Status::fail(
      ncclRemoteError, "peer.closed",
      fmt::format("handshake with {} made no progress for {} s ({})", peer, kHandshakeTimeout.count(), stage),
      "Check the peer's log; a peer that stops mid-handshake has usually failed");
}

Status unexpected(const std::string& peer, MessageType got, const char* want) {
  return Status::fail(
      ncclRemoteError, "peer.bad_handshake",
      fmt::format("{} sent message type {} where {} was expected", peer, static_cast<int>(got), want));
}

}  // namespace

std::string local_host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

std::string peer_text(const ListenHandle& h) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(h.family == 6 ? AF_INET6 : AF_INET, h.addr.data(), buf, sizeof buf);
  return h.family == 6 ? fmt::format("[{}]:{}", buf, h.port) : fmt::format("{}:{}", buf, h.port);
}

// --- sender

SendConnector::SendConnector(const ListenHandle& handle, LocalDevice dev, LinkParams link)
    : handle_(handle), dev_(std::move(dev)), comm_(std::make_unique<VerbsSendComm>()) {
  comm_->set_link(link);
  comm_->set_profiler(dev_.profiler);
  comm_->set_local(describe_local(dev_, link));
  deadline_ = Connection::Clock::now() + kHandshakeTimeout;
}

Status SendConnector::start() {
  Fd fd;
  if (Status st = start_connect(handle_address(handle_), &fd); !st.ok()) return st;
  tune_socket(fd.get(), static_cast<int>(kHandshakeTimeout.count()));
  comm_->set_oob(Channel(std::move(fd), peer_text(handle_)));
  return Status::success();
}

Status SendConnector::step(VerbsSendComm** out) {
  *out = nullptr;
  VerbsSendComm& c = *comm_;
  if (stage_ == Stage::Connecting) {
    bool ready = false;
    if (Status st = c.oob().connected(&ready); !st.ok()) return st;
    if (!ready) {
      // The kernel alone would retry the SYN for ~127 s (tcp_syn_retries); the handshake's own
      // deadline bounds this stage too.
      if (Connection::Clock::now() > deadline_)
        return Status::fail(
            ncclRemoteError, "progress.stalled",
            fmt::format("connecting to the listener at {}: no answer within {} s", c.oob().peer(),
                        kHandshakeTimeout.count()),
            "Check that the peer process is alive and that its address is reachable from this host");
      return Status::success();
    }
    // The completion queues wait for the receiver's reply: their depth depends on the protocol it
    // agrees to and on its device count.
    if (Status st = c.open_lanes(dev_.ports, dev_.health, dev_.caches); !st.ok()) return st;
    if (Status st = c.prepare(); !st.ok()) return st;
    Message hello;
    hello.type = MessageType::Hello;
    hello.nonce = handle_.nonce;
    hello.end = c.local_end(c.region_rkeys(), c.region_addr());
    c.oob().send(hello);
    stage_ = Stage::AwaitReply;
    deadline_ = Connection::Clock::now() + kHandshakeTimeout;
  }
  bool flushed = false;
  if (Status st = c.oob().flush(&flushed); !st.ok()) return st;
  std::optional<Message> m;
  if (Status st = c.oob().receive(&m); !st.ok()) return st;
  if (!m) {
    if (Connection::Clock::now() > deadline_) return timed_out(c.oob().peer(), "waiting for the receiver");
    return Status::success();
  }
  deadline_ = Connection::Clock::now() + kHandshakeTimeout;
  if (stage_ == Stage::AwaitReply) {
    if (m->type != MessageType::Reply) return unexpected(c.oob().peer(), m->type, "REPLY");
    return on_reply(*m);
  }
  if (m->type != MessageType::Ready) return unexpected(c.oob().peer(), m->type, "READY");
  if (m->status != kOk)
    return Status::fail(ncclRemoteError, "qp.modify_failed",
                        fmt::format("the receiver {} could not bring its QPs up (see its log); {}",
                                    c.oob().peer(), c.where()));
  RS_INFO(NCCL_NET, "NET/railscope : connected {} with {} QP(s), path MTU {}, {}", c.where(), c.qps().size(),
          c.path_mtu(), protocol_text(c.eager_max()));
  *out = comm_.release();
  return Status::success();
}

Status SendConnector::on_reply(const Message& m) {
  VerbsSendComm& c = *comm_;
  c.set_remote(m.end);
  if (m.status != kOk) {
    // Run the same checks the receiver ran, to name the problem here too.
    for (const auto& ld : c.local().devs)
      for (const auto& rd : c.remote().devs) {
        PathChoice path;
        if (Status st = check_link(ld.record, c.local().host, rd.record, c.remote().host, &path); !st.ok())
          return st;
      }
    return Status::fail(ncclRemoteError, "peer.bad_handshake",
                        fmt::format("the receiver {} rejected the connection (code {}); see its log",
                                    c.oob().peer(), m.status));
  }
  if (auto qos = check_qos_at_sender(c.local(), c.remote(), is_roce(c.local()))) warn_qos_mismatch_once(*qos);
  if (c.remote().eager_max > c.local().eager_max)
    return Status::fail(ncclRemoteError, "peer.bad_handshake",
                        fmt::format("the receiver {} chose eager limit {} above the {} offered",
                                    c.oob().peer(), c.remote().eager_max, c.local().eager_max));
  if (Status st = c.choose_protocol(c.remote().eager_max); !st.ok()) return st;
  const size_t expected = c.local().qps_per_conn * std::max(c.local().devs.size(), c.remote().devs.size());
  if (c.remote().qpns.size() != expected)
    return Status::fail(ncclRemoteError, "peer.bad_handshake",
                        fmt::format("the receiver {} created {} QPs, {} expected", c.oob().peer(),
                                    c.remote().qpns.size(), expected));
  // QPs per local lane: the QPs spread round robin over this end's lanes.
  const size_t nlanes = c.lanes().size();
  if (Status st = c.create_qps(static_cast<int>(expected), static_cast<int>(c.remote().devs.size()),
                               sender_caps(c.eager_max() > 0),
                               cq_entries(c.eager_max() > 0, (expected + nlanes - 1) / nlanes));
      !st.ok())
    return st;
  if (Status st = c.connect_qps(c.remote().qpns); !st.ok()) return st;
  Message q;
  q.type = MessageType::Qpns;
  q.qpns = c.qpns();
  if (c.eager_max() == 0) {
    q.fifo_addr = c.region_addr();
    q.fifo_rkeys = c.region_rkeys();
  }
  c.oob().send(q);
  bool flushed = false;
  if (Status st = c.oob().flush(&flushed); !st.ok()) return st;
  stage_ = Stage::AwaitReady;
  return Status::success();
}

// --- receiver

RecvAcceptor::RecvAcceptor(Fd fd, std::string peer, uint64_t nonce, LocalDevice dev, LinkParams link)
    : nonce_(nonce), dev_(std::move(dev)), comm_(std::make_unique<VerbsRecvComm>()) {
  comm_->set_oob(Channel(std::move(fd), std::move(peer)));
  comm_->set_link(link);
  comm_->set_profiler(dev_.profiler);
  comm_->set_local(describe_local(dev_, link));
  deadline_ = Connection::Clock::now() + kHandshakeTimeout;
}

Status RecvAcceptor::reject(uint8_t code, Status why) {
  Message r;
  r.type = MessageType::Reply;
  r.status = code;
  r.end = comm_->local();
  r.end.qpns.clear();
  comm_->oob().send(r);
  bool flushed = false;
  (void)comm_->oob().flush(&flushed);  // best effort: the sender learns why, we report either way
  return why;
}

Status RecvAcceptor::refuse_unverified(const char* cause, Status why) {
  refusal_ = cause;
  return why;
}

Status RecvAcceptor::on_hello(const Message& m) {
  VerbsRecvComm& c = *comm_;
  if (m.nonce != nonce_)
    return refuse_unverified(
        "wrong_listener",
        reject(kRejectNonce, Status::fail(ncclRemoteError, "peer.bad_handshake",
                                          fmt::format("{} connected with a handle for another listener "
                                                      "(its HELLO names listener {:#x}; stale handle?)",
                                                      c.oob().peer(), m.nonce))));
  verified_ = true;
  if (!m.end.qpns.empty())
    return Status::fail(ncclRemoteError, "peer.bad_handshake",
                        fmt::format("{} sent QPNs too early", c.oob().peer()));
  c.set_remote(m.end);
  // The sender decides traffic class and service level (as NCCL does); the REPLY tells it this end's own.
  const QosAgreement qos = agree_qos_at_receiver(c.link(), c.local().host, m.end, is_roce(c.local()));
  if (qos.mismatch) warn_qos_mismatch_once(*qos.mismatch);
  LinkParams link = c.link();
  link.traffic_class = qos.traffic_class;
  link.service_level = qos.service_level;
  EndInfo local = c.local();
  reply_qos(c.link(), m.end, &local);
  c.set_link(link);
  local.qps_per_conn = m.end.qps_per_conn;
  local.eager_max = std::min(m.end.eager_max, local.eager_max);  // both ends must offer it
  c.set_local(std::move(local));
  if (Status st = c.choose_protocol(c.local().eager_max); !st.ok()) return st;
  const size_t nl = c.local().devs.size(), nr = c.remote().devs.size();
  const size_t nqps = c.remote().qps_per_conn * std::max(nl, nr);
  for (size_t q = 0; q < std::max(nl, nr); ++q) {
    PathChoice path;
    if (Status st = check_link(c.local().devs[q % nl].record, c.local().host, c.remote().devs[q % nr].record,
                               c.remote().host, &path);
        !st.ok())
      return reject(kRejectIncompatible, std::move(st));
  }
  if (Status st = c.open_lanes(dev_.ports, dev_.health, dev_.caches); !st.ok())
    return reject(kRejectResources, std::move(st));
  if (Status st = c.prepare(); !st.ok()) return reject(kRejectResources, std::move(st));
  if (Status st = c.create_qps(static_cast<int>(nqps), static_cast<int>(nr), receiver_caps(c.eager_max() > 0),
                               cq_entries(c.eager_max() > 0, (nqps + nl - 1) / nl));
      !st.ok())
    return reject(kRejectResources, std::move(st));
  Message r;
  r.type = MessageType::Reply;
  r.status = kOk;
  r.end = c.local_end(c.advertised_rkeys(), c.advertised_addr());
  c.oob().send(r);
  stage_ = Stage::AwaitQpns;
  return Status::success();
}

Status RecvAcceptor::step(VerbsRecvComm** out) {
  *out = nullptr;
  VerbsRecvComm& c = *comm_;
  bool flushed = false;
  if (Status st = c.oob().flush(&flushed); !st.ok()) return st;
  if (stage_ == Stage::SendReady) {
    if (!flushed) return Status::success();
    RS_INFO(NCCL_NET, "NET/railscope : accepted {} with {} QP(s), path MTU {}, {}", c.where(), c.qps().size(),
            c.path_mtu(), protocol_text(c.eager_max()));
    *out = comm_.release();
    return Status::success();
  }
  std::optional<Message> m;
  if (Status st = c.oob().receive(&m); !st.ok()) {
    if (verified_) return st;
    // railscope of another release: told why (a REPLY of this version, which it cannot read and names)
    // before the connection is dropped, so that the sender fails naming both versions.
    if (c.oob().peer_speaks_other_version())
      return refuse_unverified("version", reject(kRejectIncompatible, std::move(st)));
    const char* kind = st.finding().id() == "peer.bad_handshake" ? "malformed" : "closed";
    return refuse_unverified(kind, std::move(st));
  }
  if (!m) {
    if (Connection::Clock::now() > deadline_)
      return verified_ ? timed_out(c.oob().peer(), "waiting for the sender")
                       : refuse_unverified("silent", timed_out(c.oob().peer(), "no HELLO from the sender"));
    return Status::success();
  }
  deadline_ = Connection::Clock::now() + kHandshakeTimeout;
  if (stage_ == Stage::AwaitHello) {
    if (m->type != MessageType::Hello)
      return refuse_unverified("malformed", unexpected(c.oob().peer(), m->type, "HELLO"));
    if (Status st = on_hello(*m); !st.ok()) return st;
    return c.oob().flush(&flushed);
  }
  if (m->type != MessageType::Qpns) return unexpected(c.oob().peer(), m->type, "QPNS");
  Message ready;
  ready.type = MessageType::Ready;
  EndInfo remote = c.remote();
  Status st = take_fifo(*m, c.eager_max(), c.oob().peer(), &remote);
  if (st.ok()) c.set_remote(std::move(remote));
  if (st.ok()) st = c.connect_qps(m->qpns);
  if (st.ok()) st = c.start();
  if (!st.ok()) {
    ready.status = kRejectIncompatible;
    c.oob().send(ready);
    (void)c.oob().flush(&flushed);
    return st;
  }
  ready.status = kOk;
  c.oob().send(ready);
  stage_ = Stage::SendReady;
  return step(out);
}

}  // namespace railscope::net::verbs
