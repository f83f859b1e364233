// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/common/socket.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "railscope/socket/endpoints.h"

namespace railscope::net {
namespace {

Status sys_fail(const char* what, int err) {
  return Status::fail(ncclSystemError, "internal.unknown_diagnosis",
                      fmt::format("{} failed: {} ({})", what, std::strerror(err), err));
}

Status listen_failed(const SocketAddress& a, const char* what, int err) {
  return Status::fail(
      ncclSystemError, "net.listen_failed",
      fmt::format("cannot listen on {}: {} failed: {} ({})", address_text(a), what, std::strerror(err), err));
}

socklen_t fill_addr(const SocketAddress& a, sockaddr_storage* ss) {
  std::memset(ss, 0, sizeof *ss);
  if (a.family == 6) {
    sockaddr_in6 s{};
    s.sin6_family = AF_INET6;
    s.sin6_port = htons(a.port);
    std::memcpy(&s.sin6_addr, a.addr.data(), 16);
    std::memcpy(ss, &s, sizeof s);
    return sizeof s;
  }
  sockaddr_in s{};
  s.sin_family = AF_INET;
  s.sin_port = htons(a.port);
  std::memcpy(&s.sin_addr, a.addr.data(), 4);
  std::memcpy(ss, &s, sizeof s);
  return sizeof s;
}

SocketAddress from_storage(const sockaddr_storage& ss) {
  SocketAddress a;
  if (ss.ss_family == AF_INET6) {
    sockaddr_in6 s{};
    std::memcpy(&s, &ss, sizeof s);
    a.family = 6;
    std::memcpy(a.addr.data(), &s.sin6_addr, 16);
    a.port = ntohs(s.sin6_port);
  } else {
    sockaddr_in s{};
    std::memcpy(&s, &ss, sizeof s);
    a.family = 4;
    std::memcpy(a.addr.data(), &s.sin_addr, 4);
    a.port = ntohs(s.sin_port);
  }
  return a;
}

void set_int(int fd, int level, int opt, int v) { (void)::setsockopt(fd, level, opt, &v, sizeof v); }

std::string host_text(const SocketAddress& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(a.family == 6 ? AF_INET6 : AF_INET, a.addr.data(), buf, sizeof buf);
  return buf;
}

}  // namespace

std::string address_text(const SocketAddress& a) {
  return a.family == 6 ? fmt::format("[{}]:{}", host_text(a), a.port)
                       : fmt::format("{}:{}", host_text(a), a.port);
}

Status open_listener(const SocketAddress& a, Fd* out, uint16_t* port) {
  sockaddr_storage ss{};
  const socklen_t len = fill_addr(a, &ss);
  socket::Opened o = socket::listen_at(reinterpret_cast<sockaddr*>(&ss), len, true);
  if (!o.fd) return listen_failed(a, o.step, o.err);
  *port = socket::local_port(o.fd.get());
  if (*port == 0) return listen_failed(a, "getsockname", errno);
  *out = std::move(o.fd);
  return Status::success();
}

Status accept_one(const Fd& listener, Fd* out) {
  socket::Accepted a = socket::accept_one(listener.get(), true);
  if (a.err != 0) return sys_fail("accept", a.err);
  if (a.fd) *out = std::move(a.fd);
  return Status::success();
}

Status start_connect(const SocketAddress& a, Fd* out) {
  sockaddr_storage ss{};
  const socklen_t len = fill_addr(a, &ss);
  socket::Opened o = socket::start_connect(reinterpret_cast<sockaddr*>(&ss), len);
  if (!o.fd)
    return std::strcmp(o.step, "socket") == 0 ? sys_fail("socket", o.err)
                                              : io_failure("connect", -1, o.err, address_text(a), 0);
  *out = std::move(o.fd);
  return Status::success();
}

Status connect_finished(int fd, const std::string& peer, bool* ready) {
  *ready = false;
  if (const int err = socket::connect_error(fd); err != 0) return io_failure("connect", -1, err, peer, 0);
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) *ready = true;
  return Status::success();
}

void tune_socket(int fd, int timeout_s, int sockbuf) {
  socket::set_no_delay(fd);
  if (sockbuf > 0) {
    set_int(fd, SOL_SOCKET, SO_SNDBUF, sockbuf);
    set_int(fd, SOL_SOCKET, SO_RCVBUF, sockbuf);
  }
  // A silent peer (host gone, link down) is noticed within ~timeout: keepalive probes while idle,
  // TCP_USER_TIMEOUT while data waits for an acknowledgement (tcp(7)).
  int idle = timeout_s / 3 > 0 ? timeout_s / 3 : 1;
  int intvl = timeout_s / 6 > 0 ? timeout_s / 6 : 1;
  set_int(fd, SOL_SOCKET, SO_KEEPALIVE, 1);
  set_int(fd, IPPROTO_TCP, TCP_KEEPIDLE, idle);
  set_int(fd, IPPROTO_TCP, TCP_KEEPINTVL, intvl);
  set_int(fd, IPPROTO_TCP, TCP_KEEPCNT, 3);
  set_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, timeout_s * 1000);
}

void allow_slow_reader(int fd) { set_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, 0); }  // 0: the system's

std::optional<AckState> ack_state(int fd) {
  tcp_info ti{};
  socklen_t len = sizeof ti;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return std::nullopt;
  return AckState{ti.tcpi_unacked, ti.tcpi_probes, ti.tcpi_last_ack_recv};
}

bool peer_unresponsive(const AckState& a, int timeout_s) {
  const bool waiting = a.unacked > 0 || a.probes >= 2;
  return waiting && static_cast<uint64_t>(a.ms_since_ack) >= static_cast<uint64_t>(timeout_s) * 1000;
}

Status peer_alive(int fd, const std::string& peer) {
  // POLLRDHUP: the peer shut down its writing half (poll(2)); reported even while bytes it sent
  // before closing are still unread, which a MSG_PEEK of one byte would mistake for a live peer.
  pollfd p{fd, POLLRDHUP, 0};
  int n = ::poll(&p, 1, 0);
  if (n < 0) return errno == EINTR ? Status::success() : sys_fail("poll", errno);
  if (n == 0) return Status::success();
  if ((p.revents & POLLERR) != 0) {
    int err = 0;
    socklen_t len = sizeof err;
    (void)::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    return io_failure("liveness check", -1, err != 0 ? err : ECONNRESET, peer, 0);
  }
  if ((p.revents & (POLLRDHUP | POLLHUP | POLLNVAL)) != 0) return io_failure("liveness check", 0, 0, peer, 0);
  return Status::success();
}

Status io_failure(const char* op, ssize_t n, int err, const std::string& peer, int timeout_s) {
  if (n == 0)
    return Status::fail(ncclRemoteError, "peer.closed",
                        fmt::format("{} on the connection with {}: the peer closed it (process exited or "
                                    "closed its comm)",
                                    op, peer));
  switch (err) {
    case ECONNRESET:
    case EPIPE:
    case ECONNREFUSED:
    case ECONNABORTED:
      return Status::fail(ncclRemoteError, "peer.closed",
                          fmt::format("{} on the connection with {}: {}", op, peer, std::strerror(err)));
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ENETDOWN:
      return Status::fail(
          ncclRemoteError, "progress.stalled",
          timeout_s > 0
              ? fmt::format(
                    "{} on the connection with {}: {} (nothing acknowledged for {} s: peer host gone, "
                    "link down or packets dropped)",
                    op, peer, std::strerror(err), timeout_s)
              : fmt::format("{} on the connection with {}: {} (peer host gone, link down or packets dropped)",
                            op, peer, std::strerror(err)));
    default:
      return Status::fail(ncclSystemError, "internal.unknown_diagnosis",
                          fmt::format("{} on the connection with {}: {}", op, peer, std::strerror(err)));
  }
}

std::string peer_of(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  return address_text(from_storage(ss));
}

std::string source_of(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  return host_text(from_storage(ss));
}

void fallback_address(std::array<uint8_t, 16>* out) {
  out->fill(0);
  const uint8_t loop[4] = {127, 0, 0, 1};
  std::memcpy(out->data(), loop, 4);
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    sockaddr_in a{};
    std::memcpy(&a, i->ifa_addr, sizeof a);
    if ((ntohl(a.sin_addr.s_addr) >> 24) == 127) continue;
    std::memcpy(out->data(), &a.sin_addr, 4);
    break;
  }
  freeifaddrs(list);
}

}  // namespace railscope::net
