#include "oob.h"

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

#include "plan_checks.h"
#include "protocol.h"

namespace railscope::netbench {

namespace {

constexpr uint32_t kMagic = 0x52534e42;  // "RSNB"
constexpr uint32_t kMaxPayload = 1 << 16;

struct Frame {
  uint32_t magic;
  uint32_t type;
  uint32_t length;
};

std::string errno_text(int err) {
  return std::string(std::strerror(err)) + " (errno " + std::to_string(err) + ")";
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

addrinfo* resolve(const std::string& host, uint16_t port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  const int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0) throw BenchError("cannot resolve '" + host + "': " + gai_strerror(rc));
  return res;
}

}  // namespace

OobSocket& OobSocket::operator=(OobSocket&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

OobSocket::~OobSocket() {
  if (fd_ >= 0) ::close(fd_);
}

bool OobSocket::readable() const {
  pollfd pfd{fd_, POLLIN, 0};
  return ::poll(&pfd, 1, 0) > 0;
}

void OobSocket::write_all(const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd_, p, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw BenchError("out-of-band send failed: " + errno_text(errno) + " (peer gone?)");
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void OobSocket::read_all(void* data, size_t size, Clock::time_point deadline) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    pollfd pfd{fd_, POLLIN, 0};
    const int rc = ::poll(&pfd, 1, remaining_ms(deadline));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) throw BenchError("out-of-band poll failed: " + errno_text(errno));
    if (rc == 0) throw BenchError("out-of-band peer sent nothing before the deadline");
    const ssize_t n = ::recv(fd_, p, size, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw BenchError("out-of-band receive failed: " + errno_text(errno));
    }
    if (n == 0) throw BenchError("out-of-band peer closed the connection (peer process exited?)");
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void OobSocket::send(uint32_t type, std::span<const unsigned char> payload) {
  const Frame f{kMagic, type, static_cast<uint32_t>(payload.size())};
  write_all(&f, sizeof f);
  if (!payload.empty()) write_all(payload.data(), payload.size());
}

std::pair<uint32_t, std::vector<unsigned char>> OobSocket::receive_any(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  Frame f{};
  read_all(&f, sizeof f, deadline);
  if (f.magic != kMagic) throw BenchError("out-of-band peer is not netbench (bad magic)");
  if (f.length > kMaxPayload) throw BenchError("out-of-band message too large: " + std::to_string(f.length));
  std::vector<unsigned char> payload(f.length);
  if (f.length > 0) read_all(payload.data(), payload.size(), deadline);
  return {f.type, std::move(payload)};
}

std::vector<unsigned char> OobSocket::receive(uint32_t type, std::chrono::milliseconds timeout) {
  auto [got, payload] = receive_any(timeout);
  if (got != type) {
    if (got == kMsgError) throw BenchError("the peer failed: " + peer_text(payload.data(), payload.size()));
    throw BenchError("out-of-band: expected message " + std::to_string(type) + ", got " +
                     std::to_string(got));
  }
  return payload;
}

OobListener OobListener::bind(const std::string& host, uint16_t port) {
  addrinfo* res = resolve(host, port, true);
  std::string last = "no address";
  OobListener l;
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    OobSocket s(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    if (s.fd() < 0) continue;
    const int one = 1;
    ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(s.fd(), ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(s.fd(), 4) != 0) {
      last = errno_text(errno);
      continue;
    }
    l.sock_ = std::move(s);
    break;
  }
  freeaddrinfo(res);
  if (l.sock_.fd() < 0)
    throw BenchError("cannot listen on " + (host.empty() ? std::string("*") : host) + ":" +
                     std::to_string(port) + ": " + last);
  return l;
}

OobListener OobListener::adopt(int fd) {
  OobListener l;
  l.sock_ = OobSocket(fd);
  return l;
}

uint16_t OobListener::port() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(sock_.fd(), reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return 0;
}

OobSocket OobListener::accept(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    pollfd pfd{sock_.fd(), POLLIN, 0};
    const int rc = ::poll(&pfd, 1, remaining_ms(deadline));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) throw BenchError("out-of-band poll failed: " + errno_text(errno));
    if (rc == 0)
      throw BenchError("no netbench client connected within " + std::to_string(timeout.count()) + " ms");
    OobSocket s(::accept4(sock_.fd(), nullptr, nullptr, SOCK_CLOEXEC));
    if (s.fd() < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      throw BenchError("out-of-band accept failed: " + errno_text(errno));
    }
    const int one = 1;
    ::setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return s;
  }
}

OobSocket oob_connect(const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::string last;
  for (;;) {
    addrinfo* res = resolve(host, port, false);
    for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
      OobSocket s(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
      if (s.fd() < 0) continue;
      if (::connect(s.fd(), ai->ai_addr, ai->ai_addrlen) == 0) {
        freeaddrinfo(res);
        const int one = 1;
        ::setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        return s;
      }
      last = errno_text(errno);
    }
    freeaddrinfo(res);
    if (Clock::now() >= deadline)
      throw BenchError("cannot reach the netbench server at " + host + ":" + std::to_string(port) + ": " +
                       last);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace railscope::netbench
