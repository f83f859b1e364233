#include "plugin/net/verbs/oob_channel.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace railscope::net::verbs {
namespace {

Status sys_fail(const std::string& what, int err) {
  return Status::fail(ncclSystemError, "peer.closed",
                      fmt::format("{} failed: {} ({})", what, std::strerror(err), err));
}

void set_socket_options(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

Status open_listener(Fd* out, uint16_t* port, int family) {
  int fd = ::socket(family == 6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return sys_fail("socket", errno);
  Fd guard(fd);
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (family == 6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_any;
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_ANY);
    len = sizeof *a;
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) return sys_fail("bind", errno);
  if (::listen(fd, 64) != 0) return sys_fail("listen", errno);
  len = sizeof ss;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return sys_fail("getsockname", errno);
  *port = family == 6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                      : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  *out = std::move(guard);
  return Status::success();
}

Status accept_one(const Fd& listener, Fd* out) {
  int fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
      return Status::success();
    return sys_fail("accept", errno);
  }
  set_socket_options(fd);
  *out = Fd(fd);
  return Status::success();
}

Status start_connect(const ListenHandle& h, Fd* out) {
  int fd = ::socket(h.family == 6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return sys_fail("socket", errno);
  Fd guard(fd);
  set_socket_options(fd);
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (h.family == 6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    std::memcpy(&a->sin6_addr, h.addr.data(), 16);
    a->sin6_port = htons(h.port);
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    std::memcpy(&a->sin_addr, h.addr.data(), 4);
    a->sin_port = htons(h.port);
    len = sizeof *a;
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 && errno != EINPROGRESS)
    return sys_fail("connect", errno);
  *out = std::move(guard);
  return Status::success();
}

void fallback_address(std::array<uint8_t, 16>* out) {
  out->fill(0);
  uint8_t loop[4] = {127, 0, 0, 1};
  std::memcpy(out->data(), loop, 4);
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    auto* a = reinterpret_cast<sockaddr_in*>(i->ifa_addr);
    if ((ntohl(a->sin_addr.s_addr) >> 24) == 127) continue;
    std::memcpy(out->data(), &a->sin_addr, 4);
    break;
  }
  freeifaddrs(list);
}

Status Channel::connected(bool* ready) {
  *ready = false;
  pollfd p{fd_.get(), POLLOUT, 0};
  int n = ::poll(&p, 1, 0);
  if (n <= 0) return Status::success();
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len);
  if (err == EINPROGRESS || err == EALREADY) return Status::success();
  if (err != 0)
    return Status::fail(
        ncclSystemError, "peer.closed",
        fmt::format("cannot reach the listener at {}: {} ({})", peer_, std::strerror(err), err),
        "Check that the peer process is running and its address is reachable from this host");
  *ready = true;
  return Status::success();
}

void Channel::send(const Message& m) {
  auto bytes = encode_message(m);
  out_.insert(out_.end(), bytes.begin(), bytes.end());
}

Status Channel::closed(const char* during) {
  return Status::fail(ncclRemoteError, "peer.closed",
                      fmt::format("{} closed the connection {}", peer_, during));
}

Status Channel::flush(bool* done) {
  while (out_off_ < out_.size()) {
    ssize_t n =
        ::send(fd_.get(), out_.data() + out_off_, out_.size() - out_off_, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
      if (errno == EPIPE || errno == ECONNRESET) return closed("during the handshake");
      return sys_fail("send", errno);
    }
    out_off_ += static_cast<size_t>(n);
  }
  if (out_off_ == out_.size()) {
    out_.clear();
    out_off_ = 0;
  }
  *done = out_.empty();
  return Status::success();
}

Status Channel::receive(std::optional<Message>* out) {
  out->reset();
  auto read_some = [&](std::byte* dst, size_t want, size_t* got) -> Status {
    while (*got < want) {
      ssize_t n = ::recv(fd_.get(), dst + *got, want - *got, MSG_DONTWAIT);
      if (n == 0) return closed("during the handshake");
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return Status::success();
        if (errno == ECONNRESET) return closed("during the handshake (reset)");
        return sys_fail("recv", errno);
      }
      *got += static_cast<size_t>(n);
    }
    return Status::success();
  };
  if (!have_header_) {
    if (Status st = read_some(header_.data(), header_.size(), &header_got_); !st.ok()) return st;
    if (header_got_ < header_.size()) return Status::success();
    std::string why;
    auto len = decode_header(header_, &type_, &why);
    if (!len)
      return Status::fail(ncclRemoteError, "peer.bad_handshake", fmt::format("from {}: {}", peer_, why));
    body_.assign(*len, std::byte{0});
    body_got_ = 0;
    have_header_ = true;
  }
  if (Status st = read_some(body_.data(), body_.size(), &body_got_); !st.ok()) return st;
  if (body_got_ < body_.size()) return Status::success();
  have_header_ = false;
  header_got_ = 0;
  std::string why;
  auto m = decode_body(type_, body_, &why);
  if (!m) return Status::fail(ncclRemoteError, "peer.bad_handshake", fmt::format("from {}: {}", peer_, why));
  *out = std::move(m);
  return Status::success();
}

Status Channel::alive() {
  std::byte b{};
  ssize_t n = ::recv(fd_.get(), &b, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return closed("(the peer process exited or closed its end)");
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    return Status::fail(ncclRemoteError, "peer.closed",
                        fmt::format("connection to {} failed: {} ({})", peer_, std::strerror(errno), errno));
  return Status::success();
}

}  // namespace railscope::net::verbs
