// Length-prefixed frames over TCP with deadlines (see rendezvous.h).
#include "rendezvous.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

namespace railscope::preflight {
namespace {

int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : left > 60000 ? 60000 : static_cast<int>(left);
}

// Waits until fd is ready for `events`; false at the deadline.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    const int left = ms_left(deadline);
    const int r = ::poll(&p, 1, left);
    if (r > 0) return true;
    if (r < 0 && errno == EINTR) continue;
    if (r == 0 && left == 0) return false;
    if (r < 0) return false;
  }
}

bool write_all(int fd, const char* data, size_t size, Clock::time_point deadline, std::string* error) {
  while (size > 0) {
    if (!wait_for(fd, POLLOUT, deadline)) return *error = "send timed out", false;
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) return *error = std::string("send failed: ") + std::strerror(errno), false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool read_all(int fd, char* data, size_t size, Clock::time_point deadline, std::string* error) {
  while (size > 0) {
    if (!wait_for(fd, POLLIN, deadline)) return *error = "timed out waiting for data", false;
    const ssize_t n = ::recv(fd, data, size, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n == 0) return *error = "connection closed", false;
    if (n < 0) return *error = std::string("receive failed: ") + std::strerror(errno), false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

bool send_frame(int fd, FrameAuth& auth, FrameType type, const std::string& payload,
                Clock::time_point deadline, std::string* error) {
  if (payload.size() > kMaxFrame) return *error = "message larger than the frame cap", false;
  const std::string bytes = auth.seal(type, payload);
  if (bytes.empty()) return *error = "cannot seal the message (no handshake, or no random nonce)", false;
  return write_all(fd, bytes.data(), bytes.size(), deadline, error);
}

std::optional<Frame> receive_frame(int fd, FrameAuth& auth, Clock::time_point deadline, std::string* error) {
  std::string head(kHeaderBytes, '\0');
  if (!read_all(fd, head.data(), head.size(), deadline, error)) return std::nullopt;
  const auto size = auth.body_size(head, error);
  if (!size) return std::nullopt;
  std::string body(*size, '\0');
  if (!read_all(fd, body.data(), body.size(), deadline, error)) return std::nullopt;
  return auth.open(head, body, error);
}

bool exchange_hellos(int fd, FrameAuth& auth, Clock::time_point deadline, std::string* error) {
  if (!auth.ok()) return *error = "cannot start the handshake: " + auth.error(), false;
  const auto mine = [&] { return send_frame(fd, auth, FrameType::Hello, {}, deadline, error); };
  const auto theirs = [&] {
    const auto f = receive_frame(fd, auth, deadline, error);
    if (f && f->type != FrameType::Hello) return *error = "expected a hello", false;
    return f.has_value();
  };
  // Each end sends first: the peer learns this end's mode (and names a mismatch) whatever it holds.
  return mine() && theirs();
}

bool on_loopback(int fd, bool local) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if ((local ? ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len)
             : ::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len)) != 0)
    return false;
  if (ss.ss_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr.s_addr) >> 24) == 127;
  if (ss.ss_family != AF_INET6) return false;
  const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr;
  return IN6_IS_ADDR_LOOPBACK(&a) || (IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127);
}

Fd listen_on(const std::string& bind_host, uint16_t port, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc =
          ::getaddrinfo(bind_host.empty() ? nullptr : bind_host.c_str(), service.c_str(), &hints, &res))
    return *error = "cannot resolve " + bind_host + ": " + ::gai_strerror(rc), Fd();
  std::string last = "no address";
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    Fd s(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    if (!s) continue;
    const int one = 1;
    ::setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ai->ai_family == AF_INET6) {
      const int zero = 0;  // [::] takes IPv4 too
      ::setsockopt(s.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    }
    if (::bind(s.get(), ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(s.get(), SOMAXCONN) == 0) {
      ::freeaddrinfo(res);
      return s;
    }
    last = std::strerror(errno);
  }
  ::freeaddrinfo(res);
  *error =
      "cannot listen on " + (bind_host.empty() ? std::string("*") : bind_host) + ":" + service + ": " + last;
  return Fd();
}

SpareFd::SpareFd() : fd(::open("/dev/null", O_RDONLY | O_CLOEXEC)) {}

Fd accept_until(int listen_fd, Clock::time_point deadline, std::string* peer, SpareFd* spare) {
  // The listening socket stays readable while a connection waits, so a failed accept must not go
  // straight back to poll: the deadline is checked on every turn.
  while (Clock::now() < deadline && wait_for(listen_fd, POLLIN, deadline)) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    Fd c(::accept4(listen_fd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC));
    if (!c) {
      const int err = errno;
      if (err == EINTR || err == ECONNABORTED || err == EAGAIN || err == EWOULDBLOCK) continue;
      if ((err == EMFILE || err == ENFILE) && spare && spare->fd) {
        spare->fd = Fd();
        if (Fd dropped(::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC)); dropped) ++spare->closed;
        spare->fd = Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
        continue;
      }
      // Out of descriptors with no spare, or out of kernel memory: wait for one to come free.
      std::this_thread::sleep_for(std::min<Clock::duration>(
          std::chrono::milliseconds(50), std::max(deadline - Clock::now(), Clock::duration(0))));
      continue;
    }
    char host[NI_MAXHOST] = "?";
    char serv[NI_MAXSERV] = "?";
    ::getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, serv, sizeof serv,
                  NI_NUMERICHOST | NI_NUMERICSERV);
    *peer = std::string(host) + ":" + serv;
    return c;
  }
  return Fd();
}

Fd connect_until(const std::string& host, uint16_t port, Clock::time_point deadline, std::string* error) {
  const std::string service = std::to_string(port);
  *error = "timed out";
  while (Clock::now() < deadline) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res)) {
      // Not resolvable yet (a Kubernetes pod's DNS record appears when the pod is ready): retry.
      *error = "cannot resolve " + host + ": " + ::gai_strerror(rc);
    } else {
      for (addrinfo* ai = res; ai; ai = ai->ai_next) {
        Fd s(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
        if (!s) continue;
        if (::connect(s.get(), ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
          *error = std::string("connect: ") + std::strerror(errno);
          continue;
        }
        if (!wait_for(s.get(), POLLOUT, std::min(deadline, Clock::now() + std::chrono::seconds(5)))) continue;
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
          *error = std::string("connect: ") + std::strerror(err);
          continue;
        }
        ::freeaddrinfo(res);
        return s;
      }
      ::freeaddrinfo(res);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  *error = "cannot reach rank 0 at " + host + ":" + service + " (" + *error + ")";
  return Fd();
}

}  // namespace railscope::preflight
