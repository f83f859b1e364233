// SPDX-License-Identifier: Apache-2.0
#include "railscope/socket/deadline_io.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

namespace railscope::socket {
namespace {

// poll's timeout until the deadline; at most a minute, so a far deadline is a loop, not an overflow.
int ms_left(Clock::time_point deadline) {
  const auto now = Clock::now();
  if (deadline <= now) return 0;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
  return left > 60000 ? 60000 : static_cast<int>(left);
}

bool would_block(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

}  // namespace

IoResult wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int left = ms_left(deadline);
    const int r = ::poll(&p, 1, left);
    if (r > 0) return {};
    if (r < 0 && errno != EINTR) return {Io::failed, errno};
    if (r == 0 && left == 0) return {Io::timed_out};
  }
}

IoResult send_some(int fd, std::span<const std::byte> data, size_t* sent) {
  while (*sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + *sent, data.size() - *sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (would_block(errno)) return {Io::pending};
      return {Io::failed, errno};
    }
    *sent += static_cast<size_t>(n);
  }
  return {};
}

IoResult recv_some(int fd, std::span<std::byte> data, size_t* got) {
  while (*got < data.size()) {
    const ssize_t n = ::recv(fd, data.data() + *got, data.size() - *got, MSG_DONTWAIT);
    if (n == 0) return {Io::closed};
    if (n < 0) {
      if (errno == EINTR) continue;
      if (would_block(errno)) return {Io::pending};
      return {Io::failed, errno};
    }
    *got += static_cast<size_t>(n);
  }
  return {};
}

IoResult send_all(int fd, std::span<const std::byte> data, Clock::time_point deadline) {
  size_t sent = 0;
  for (;;) {
    const IoResult r = send_some(fd, data, &sent);
    if (r.status != Io::pending) return r;
    if (const IoResult w = wait_for(fd, POLLOUT, deadline); !w.ok()) return w;
  }
}

IoResult recv_exact(int fd, std::span<std::byte> data, Clock::time_point deadline) {
  size_t got = 0;
  for (;;) {
    const IoResult r = recv_some(fd, data, &got);
    if (r.status != Io::pending) return r;
    if (const IoResult w = wait_for(fd, POLLIN, deadline); !w.ok()) return w;
  }
}

}  // namespace railscope::socket
