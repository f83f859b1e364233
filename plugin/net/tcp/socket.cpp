#include "plugin/net/tcp/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace railscope::net::tcp {
namespace {

Status sys_fail(const char* what, int err) {
  return Status::fail(ncclSystemError, "internal.unknown_diagnosis",
                      fmt::format("{} failed: {}", what, std::strerror(err)));
}

socklen_t fill_addr(int family, const std::array<uint8_t, 16>& addr, uint16_t port, sockaddr_storage* ss) {
  std::memset(ss, 0, sizeof *ss);
  if (family == 6) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(port);
    std::memcpy(&a.sin6_addr, addr.data(), 16);
    std::memcpy(ss, &a, sizeof a);
    return sizeof a;
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  std::memcpy(&a.sin_addr, addr.data(), 4);
  std::memcpy(ss, &a, sizeof a);
  return sizeof a;
}

void set_int(int fd, int level, int opt, int v) { (void)::setsockopt(fd, level, opt, &v, sizeof v); }

}  // namespace

Status open_listener(int family, const std::array<uint8_t, 16>& addr, Fd* out, uint16_t* port) {
  Fd fd(::socket(family == 6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return sys_fail("socket", errno);
  set_int(fd.get(), SOL_SOCKET, SO_REUSEADDR, 1);
  sockaddr_storage ss{};
  socklen_t len = fill_addr(family, addr, 0, &ss);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) return sys_fail("bind", errno);
  if (::listen(fd.get(), SOMAXCONN) != 0) return sys_fail("listen", errno);
  len = sizeof ss;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    return sys_fail("getsockname", errno);
  if (ss.ss_family == AF_INET6) {
    sockaddr_in6 a{};
    std::memcpy(&a, &ss, sizeof a);
    *port = ntohs(a.sin6_port);
  } else {
    sockaddr_in a{};
    std::memcpy(&a, &ss, sizeof a);
    *port = ntohs(a.sin_port);
  }
  *out = std::move(fd);
  return Status::success();
}

Status accept_one(const Fd& listener, Fd* out) {
  for (;;) {
    int fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      *out = Fd(fd);
      return Status::success();
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::success();
    return sys_fail("accept", errno);
  }
}

Status start_connect(const ListenHandle& h, Fd* out) {
  Fd fd(::socket(h.family == 6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return sys_fail("socket", errno);
  sockaddr_storage ss{};
  socklen_t len = fill_addr(h.family, h.addr, h.port, &ss);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0 && errno != EINPROGRESS)
    return io_failure("connect", -1, errno, handle_peer_text(h), 0);
  *out = std::move(fd);
  return Status::success();
}

Status connect_finished(int fd, const std::string& peer, bool* ready) {
  *ready = false;
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return sys_fail("getsockopt(SO_ERROR)", errno);
  if (err != 0) return io_failure("connect", -1, err, peer, 0);
  sockaddr_storage ss{};
  len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) *ready = true;
  return Status::success();
}

void tune_socket(int fd, const TcpOptions& o) {
  set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1);
  if (o.sockbuf > 0) {
    set_int(fd, SOL_SOCKET, SO_SNDBUF, o.sockbuf);
    set_int(fd, SOL_SOCKET, SO_RCVBUF, o.sockbuf);
  }
  // A silent peer (host gone, link down) is noticed within ~timeout: keepalive probes while idle,
  // TCP_USER_TIMEOUT while data waits for an acknowledgement.
  int idle = o.timeout_s / 3 > 0 ? o.timeout_s / 3 : 1;
  int intvl = o.timeout_s / 6 > 0 ? o.timeout_s / 6 : 1;
  set_int(fd, SOL_SOCKET, SO_KEEPALIVE, 1);
  set_int(fd, IPPROTO_TCP, TCP_KEEPIDLE, idle);
  set_int(fd, IPPROTO_TCP, TCP_KEEPINTVL, intvl);
  set_int(fd, IPPROTO_TCP, TCP_KEEPCNT, 3);
  set_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, o.timeout_s * 1000);
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
          fmt::format(
              "{} on the connection with {}: {} (nothing acknowledged for {} s: peer host gone, link down "
              "or packets dropped)",
              op, peer, std::strerror(err), timeout_s));
    default:
      return Status::fail(ncclSystemError, "internal.unknown_diagnosis",
                          fmt::format("{} on the connection with {}: {}", op, peer, std::strerror(err)));
  }
}

std::string peer_of(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET6) {
    sockaddr_in6 a{};
    std::memcpy(&a, &ss, sizeof a);
    inet_ntop(AF_INET6, &a.sin6_addr, buf, sizeof buf);
    return fmt::format("[{}]:{}", buf, ntohs(a.sin6_port));
  }
  sockaddr_in a{};
  std::memcpy(&a, &ss, sizeof a);
  inet_ntop(AF_INET, &a.sin_addr, buf, sizeof buf);
  return fmt::format("{}:{}", buf, ntohs(a.sin_port));
}

}  // namespace railscope::net::tcp
