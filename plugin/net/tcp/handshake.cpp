// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/tcp/handshake.h"

#include <fmt/format.h>
#include <sys/socket.h>

#include <cerrno>

#include "plugin/net/tcp/recv_comm.h"
#include "plugin/net/tcp/send_comm.h"
#include "railscope/core/log.h"

namespace railscope::net::tcp {
namespace {

using Clock = std::chrono::steady_clock;

Status bad_handshake(std::string detail) {
  return Status::fail(ncclRemoteError, "peer.bad_handshake", std::move(detail),
                      "Run the same railscope build (and RAILSCOPE_TRANSPORT) on every node");
}

ConnParams base_params(const LocalEnd& local) {
  ConnParams p;
  p.nthreads = local.options.nthreads;
  p.min_chunk = local.options.min_chunk;
  p.inline_max = local.options.inline_max;
  p.timeout_s = local.options.timeout_s;
  p.sockbuf = local.options.sockbuf;
  p.zerocopy = local.options.zerocopy;
  p.zerocopy_min = local.options.zerocopy_min;
  p.local_host = local.host;
  p.local_dev = local.dev;
  p.local_addr = local.addr;
  p.mtu = local.mtu;
  p.profiler = local.profiler;
  return p;
}

}  // namespace

TcpConnector::TcpConnector(const ListenHandle& handle, LocalEnd local, uint64_t conn_id)
    : handle_(handle), local_(std::move(local)), conn_id_(conn_id), peer_(handle_peer_text(handle)) {}

Status TcpConnector::start() {
  int nsocks = local_.options.nsocks();
  socks_.resize(static_cast<size_t>(nsocks) + 1);
  for (size_t i = 0; i < socks_.size(); ++i) {
    if (Status st = start_connect(handle_address(handle_), &socks_[i].fd); !st.ok()) return st;
    tune_socket(socks_[i].fd.get(), local_.options.timeout_s, local_.options.sockbuf);
    Hello h;
    h.role = i == 0 ? SocketRole::Control : SocketRole::Data;
    h.nonce = handle_.nonce;
    h.conn_id = conn_id_;
    h.index = static_cast<uint16_t>(i == 0 ? 0 : i - 1);
    h.nsocks = static_cast<uint16_t>(nsocks);
    h.min_chunk = local_.options.min_chunk;
    h.inline_max = local_.options.inline_max;
    h.host = local_.host;
    encode_hello(h, &socks_[i].hello);
  }
  deadline_ = Clock::now() + std::chrono::seconds(local_.options.timeout_s);
  return Status::success();
}

Status TcpConnector::timed_out(const char* stage) const {
  return Status::fail(
      ncclRemoteError, "progress.stalled",
      fmt::format("connecting to {}: no {} within {} s (peer not accepting, or packets dropped)", peer_,
                  stage, local_.options.timeout_s),
      "Check that the peer process is alive and that NCCL_SOCKET_IFNAME selects an interface "
      "that reaches it");
}

Status TcpConnector::step(TcpSendComm** out) {
  *out = nullptr;
  bool all_sent = true;
  for (Pending& p : socks_) {
    if (!p.connected) {
      if (Status st = connect_finished(p.fd.get(), peer_, &p.connected); !st.ok()) return st;
      if (!p.connected) {
        all_sent = false;
        continue;
      }
    }
    while (p.sent < kHelloSize) {
      ssize_t n =
          ::send(p.fd.get(), p.hello.data() + p.sent, kHelloSize - p.sent, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n <= 0) return io_failure("send (hello)", n, errno, peer_, local_.options.timeout_s);
      p.sent += static_cast<size_t>(n);
    }
    all_sent = all_sent && p.sent == kHelloSize;
  }
  if (!all_sent) return Clock::now() > deadline_ ? timed_out("connection") : Status::success();
  while (ack_got_ < kAckSize) {
    ssize_t n = ::recv(socks_[0].fd.get(), ack_.data() + ack_got_, kAckSize - ack_got_, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return Clock::now() > deadline_ ? timed_out("answer to the hello") : Status::success();
    if (n <= 0) return io_failure("recv (handshake answer)", n, errno, peer_, local_.options.timeout_s);
    ack_got_ += static_cast<size_t>(n);
  }
  std::string why;
  auto code = decode_ack(ack_, &why);
  if (!code) return bad_handshake(fmt::format("connecting to {}: {}", peer_, why));
  if (*code != AckCode::Ok)
    return bad_handshake(fmt::format(
        "{} refused the connection: {}", peer_,
        *code == AckCode::WrongListener ? "the handle's listener nonce is not that listener's (stale handle?)"
                                        : "it found our hello invalid (different railscope version?)"));
  ConnParams p = base_params(local_);
  p.peer_host = peer_;
  p.peer_addr = peer_;
  std::vector<Fd> data;
  for (size_t i = 1; i < socks_.size(); ++i) data.push_back(std::move(socks_[i].fd));
  auto comm = std::make_unique<TcpSendComm>(std::move(socks_[0].fd), std::move(data), std::move(p));
  if (Status st = comm->start(); !st.ok()) return st;
  RS_INFO(NCCL_NET, "NET/railscope : TCP connection to {} over {} with {} sockets", peer_, local_.dev,
          comm->params().nsocks);
  *out = comm.release();
  return Status::success();
}

namespace {

void send_refusal(int fd, AckCode code) {
  std::array<std::byte, kAckSize> ack{};
  encode_ack(code, &ack);
  ssize_t n = ::send(fd, ack.data(), ack.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  (void)n;  // best effort: the sender learns why, the socket is dropped either way
}

}  // namespace

void TcpListen::refuse(int fd, AckCode code, const std::string& peer, const std::string& why) {
  send_refusal(fd, code);
  RS_WARN(
      "NET/railscope : {}",
      diag::one_line(bad_handshake(fmt::format("connection from {} on {} dropped: {}", peer, local_.dev, why))
                         .finding()));
}

Status TcpListen::read_hello(Incoming* in, bool* finished) {
  *finished = false;
  while (in->got < kHelloSize) {
    ssize_t n = ::recv(in->fd.get(), in->hello.data() + in->got, kHelloSize - in->got, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Status::success();
    if (n <= 0) return io_failure("recv (hello)", n, errno, in->peer, local_.options.timeout_s);
    in->got += static_cast<size_t>(n);
  }
  *finished = true;
  return Status::success();
}

void TcpListen::place(Incoming* in, const Hello& h) {
  Group* g = nullptr;
  for (Group& c : groups_)
    if (c.conn_id == h.conn_id) g = &c;
  if (g == nullptr) {
    groups_.push_back(Group{});
    g = &groups_.back();
    g->conn_id = h.conn_id;
    g->first = h;
    g->data.resize(h.nsocks);
    g->peer = in->peer;
    g->deadline = Clock::now() + std::chrono::seconds(local_.options.timeout_s);
  }
  if (h.nsocks != g->data.size())
    return refuse(
        in->fd.get(), AckCode::BadHello, in->peer,
        fmt::format("socket announces {} data sockets, its connection {}", h.nsocks, g->data.size()));
  if (h.role == SocketRole::Control) {
    if (g->ctrl) return refuse(in->fd.get(), AckCode::BadHello, in->peer, "second control socket");
    g->ctrl = std::move(in->fd);
    g->first = h;
    g->peer = in->peer;
  } else {
    Fd& slot = g->data[h.index];
    if (slot)
      return refuse(in->fd.get(), AckCode::BadHello, in->peer, fmt::format("data socket {} twice", h.index));
    slot = std::move(in->fd);
  }
  ++g->have;
}

Verdict TcpListen::advance(Incoming& in) {
  bool finished = false;
  if (Status st = read_hello(&in, &finished); !st.ok())
    return Verdict::refused(refusal::kClosed, std::move(st));
  if (!finished) return Verdict::waiting();
  std::string why;
  auto h = decode_hello(in.hello, &why);
  if (!h) {
    send_refusal(in.fd.get(), AckCode::BadHello);
    return Verdict::refused(refusal::kMalformed, bad_handshake(fmt::format("connection from {} on {}: {}",
                                                                           in.peer, local_.dev, why)));
  }
  if (h->nonce != nonce_) {
    send_refusal(in.fd.get(), AckCode::WrongListener);
    return Verdict::refused(refusal::kWrongListener,
                            bad_handshake(fmt::format(
                                "connection from {} on {}: its hello names listener {:#x}, this one is {:#x}",
                                in.peer, local_.dev, h->nonce, nonce_)));
  }
  in.decoded = *h;
  return Verdict::verified();
}

Status TcpListen::accept(TcpRecvComm** out) {
  *out = nullptr;
  std::lock_guard lock(mutex_);
  auto now = Clock::now();
  auto make = [&](Fd fd, const std::string& peer) {
    tune_socket(fd.get(), local_.options.timeout_s, local_.options.sockbuf);
    return Incoming{std::move(fd), peer, {}, 0, {}};
  };
  auto advance = [&](Incoming& in) { return this->advance(in); };
  auto on_verified = [&](Incoming&& in, const Status& /*advance() verifies without failing*/) {
    place(&in, in.decoded);
  };
  if (Status st = incoming_.accept_from(fd_, make, advance, on_verified, now); !st.ok()) return st;
  incoming_.advance_all(advance, on_verified, now);
  for (size_t i = 0; i < groups_.size(); ++i) {
    Group& g = groups_[i];
    if (g.ctrl && g.have == static_cast<int>(g.data.size()) + 1) {
      std::array<std::byte, kAckSize> ack{};
      encode_ack(AckCode::Ok, &ack);
      ssize_t n = ::send(g.ctrl.get(), ack.data(), ack.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      Group done = std::move(g);
      groups_.erase(groups_.begin() + static_cast<std::ptrdiff_t>(i));
      if (n != static_cast<ssize_t>(kAckSize))
        return io_failure("send (handshake answer)", n < 0 ? -1 : 1, n < 0 ? errno : EAGAIN, done.peer,
                          local_.options.timeout_s);
      ConnParams p = base_params(local_);
      p.min_chunk = done.first.min_chunk;
      p.inline_max = done.first.inline_max;
      p.peer_host = done.first.host;
      p.peer_addr = done.peer;
      auto comm = std::make_unique<TcpRecvComm>(std::move(done.ctrl), std::move(done.data), std::move(p));
      if (Status st = comm->start(); !st.ok()) return st;
      RS_INFO(NCCL_NET, "NET/railscope : TCP connection from {} ({}) on {} with {} sockets", done.first.host,
              done.peer, local_.dev, comm->params().nsocks);
      *out = comm.release();
      return Status::success();
    }
    if (now > g.deadline) {
      RS_WARN(
          "NET/railscope : dropped a partial connection from {} on {}: {} of {} sockets arrived within {} s",
          g.peer, local_.dev, g.have, g.data.size() + 1, local_.options.timeout_s);
      groups_.erase(groups_.begin() + static_cast<std::ptrdiff_t>(i));
      --i;
    }
  }
  return Status::success();
}

}  // namespace railscope::net::tcp
