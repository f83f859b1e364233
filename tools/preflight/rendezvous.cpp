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

void put32(char* p, uint32_t v) {
  v = htonl(v);
  std::memcpy(p, &v, 4);
}
uint32_t get32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return ntohl(v);
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

bool send_frame(int fd, FrameType type, const std::string& payload, Clock::time_point deadline,
                std::string* error) {
  if (payload.size() > kMaxFrame) return *error = "message larger than the frame cap", false;
  char head[12];
  put32(head, kFrameMagic);
  put32(head + 4, static_cast<uint32_t>(type));
  put32(head + 8, static_cast<uint32_t>(payload.size()));
  return write_all(fd, head, sizeof head, deadline, error) &&
         write_all(fd, payload.data(), payload.size(), deadline, error);
}

std::optional<Frame> receive_frame(int fd, Clock::time_point deadline, std::string* error) {
  char head[12];
  if (!read_all(fd, head, sizeof head, deadline, error)) return std::nullopt;
  if (get32(head) != kFrameMagic) return *error = "not a railscope preflight peer (bad magic)", std::nullopt;
  const uint32_t type = get32(head + 4);
  if (type < static_cast<uint32_t>(FrameType::Report) || type > static_cast<uint32_t>(FrameType::Results))
    return *error = "unknown message type " + std::to_string(type), std::nullopt;
  const uint32_t length = get32(head + 8);
  if (length > kMaxFrame)
    return *error = "message of " + std::to_string(length) + " bytes is over the cap of " +
                    std::to_string(kMaxFrame),
           std::nullopt;
  Frame f;
  f.type = static_cast<FrameType>(type);
  f.payload.resize(length);
  if (!read_all(fd, f.payload.data(), length, deadline, error)) return std::nullopt;
  return f;
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

Fd accept_until(int listen_fd, Clock::time_point deadline, std::string* peer) {
  while (wait_for(listen_fd, POLLIN, deadline)) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    Fd c(::accept4(listen_fd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC));
    if (!c) continue;
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
