// SPDX-License-Identifier: Apache-2.0
#include "railscope/socket/endpoints.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

namespace railscope::socket {
namespace {

struct AddrInfoFree {
  void operator()(addrinfo* a) const { ::freeaddrinfo(a); }
};
using AddrList = std::unique_ptr<addrinfo, AddrInfoFree>;

// host:port's addresses, or nullptr with *error.
AddrList resolve(const std::string& host, uint16_t port, bool passive, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res)) {
    *error = "cannot resolve " + host + ": " + ::gai_strerror(rc);
    return nullptr;
  }
  return AddrList(res);
}

void set_int(int fd, int level, int opt, int v) { (void)::setsockopt(fd, level, opt, &v, sizeof v); }

std::string host_port(const sockaddr_storage& ss, socklen_t len) {
  char host[NI_MAXHOST] = "?";
  char serv[NI_MAXSERV] = "?";
  ::getnameinfo(reinterpret_cast<const sockaddr*>(&ss), len, host, sizeof host, serv, sizeof serv,
                NI_NUMERICHOST | NI_NUMERICSERV);
  return std::string(host) + ":" + serv;
}

}  // namespace

Opened listen_at(const sockaddr* addr, socklen_t len, bool nonblocking) {
  Opened o;
  o.fd.reset(::socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0));
  if (!o.fd) return {Fd(), "socket", errno};
  set_int(o.fd.get(), SOL_SOCKET, SO_REUSEADDR, 1);
  if (addr->sa_family == AF_INET6) set_int(o.fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, 0);
  if (::bind(o.fd.get(), addr, len) != 0) return {Fd(), "bind", errno};
  if (::listen(o.fd.get(), SOMAXCONN) != 0) return {Fd(), "listen", errno};
  return o;
}

Fd listen_on(const std::string& host, uint16_t port, std::string* error) {
  const AddrList list = resolve(host, port, true, error);
  if (!list) return Fd();
  std::string last = "no address";
  for (const addrinfo* ai = list.get(); ai != nullptr; ai = ai->ai_next) {
    Opened o = listen_at(ai->ai_addr, ai->ai_addrlen, false);
    if (o.fd) return std::move(o.fd);
    last = std::string(o.step) + ": " + std::strerror(o.err);
  }
  *error = "cannot listen on " + (host.empty() ? std::string("*") : host) + ":" + std::to_string(port) +
           ": " + last;
  return Fd();
}

uint16_t local_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&ss)->sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_port);
  return 0;
}

Accepted accept_one(int listen_fd, bool nonblocking, std::string* peer) {
  for (;;) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    Fd c(::accept4(listen_fd, reinterpret_cast<sockaddr*>(&ss), &len,
                   SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0)));
    if (c) {
      if (peer != nullptr) *peer = host_port(ss, len);
      return {std::move(c), 0};
    }
    const int err = errno;
    if (err == EINTR) continue;
    // ECONNABORTED: the connection that waited is gone and another may wait behind it; only a
    // non-blocking listener is asked again at once (a blocking one would wait there past any deadline).
    if (err == ECONNABORTED && (::fcntl(listen_fd, F_GETFL) & O_NONBLOCK) != 0) continue;
    if (err == ECONNABORTED || err == EAGAIN || err == EWOULDBLOCK) return {};
    return {Fd(), err};
  }
}

SpareFd::SpareFd() : fd(::open("/dev/null", O_RDONLY | O_CLOEXEC)) {}

Accepted accept_until(int listen_fd, Clock::time_point deadline, std::string* peer, SpareFd* spare) {
  // The listening socket stays readable while a connection waits, so a failed accept must not go
  // straight back to poll: the deadline is checked on every turn.
  while (Clock::now() < deadline && wait_for(listen_fd, POLLIN, deadline).ok()) {
    Accepted a = accept_one(listen_fd, false, peer);
    if (a.fd) return a;
    if (a.err == 0) continue;
    if ((a.err == EMFILE || a.err == ENFILE) && spare != nullptr && spare->fd) {
      spare->fd.reset();
      if (Fd dropped(::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC)); dropped) ++spare->closed;
      spare->fd.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
      continue;
    }
    if (a.err == EBADF || a.err == EINVAL || a.err == ENOTSOCK || a.err == EOPNOTSUPP) return a;
    // Out of descriptors with no spare, out of memory, or a network error on the connection that waited
    // (accept(2) says to treat those as EAGAIN): wait a little for things to change.
    std::this_thread::sleep_for(std::min<Clock::duration>(
        std::chrono::milliseconds(50), std::max(deadline - Clock::now(), Clock::duration(0))));
  }
  return {};
}

Opened start_connect(const sockaddr* addr, socklen_t len) {
  Opened o;
  o.fd.reset(::socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!o.fd) return {Fd(), "socket", errno};
  if (::connect(o.fd.get(), addr, len) != 0 && errno != EINPROGRESS) return {Fd(), "connect", errno};
  return o;
}

int connect_error(int fd) {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

Fd connect_until(const std::string& host, uint16_t port, Clock::time_point deadline,
                 Clock::duration retry_every, std::string* error) {
  *error = "timed out";
  while (Clock::now() < deadline) {
    // A name not resolvable yet (a Kubernetes pod's record appears when the pod is ready) is retried.
    if (const AddrList list = resolve(host, port, false, error)) {
      for (const addrinfo* ai = list.get(); ai != nullptr; ai = ai->ai_next) {
        Opened o = start_connect(ai->ai_addr, ai->ai_addrlen);
        if (!o.fd) {
          *error = std::string(o.step) + ": " + std::strerror(o.err);
          continue;
        }
        if (!wait_for(o.fd.get(), POLLOUT, std::min(deadline, Clock::now() + std::chrono::seconds(5))).ok()) {
          *error = "connect: timed out";
          continue;
        }
        if (const int err = connect_error(o.fd.get()); err != 0) {
          *error = std::string("connect: ") + std::strerror(err);
          continue;
        }
        return std::move(o.fd);
      }
    }
    std::this_thread::sleep_for(
        std::min<Clock::duration>(retry_every, std::max(deadline - Clock::now(), Clock::duration(0))));
  }
  return Fd();
}

void set_no_delay(int fd) { set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1); }

}  // namespace railscope::socket
