// SPDX-License-Identifier: Apache-2.0
// Opening stream sockets: listening, accepting and connecting, each with a deadline where it can wait.
// What a connection carries, and how it is tuned, is its user's.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "railscope/socket/deadline_io.h"
#include "railscope/socket/fd.h"

namespace railscope::socket {

// A socket opened, or the step that failed ("socket", "bind", "listen", "connect") and its errno.
struct Opened {
  Fd fd;
  const char* step = "";
  int err = 0;
};

// A listening socket on `addr`: SO_REUSEADDR, an IPv6 address of any kind also takes IPv4 (IPV6_V6ONLY
// off, so [::] is every address), backlog SOMAXCONN, close-on-exec; non-blocking when asked.
Opened listen_at(const sockaddr* addr, socklen_t len, bool nonblocking);
// The same on host:port (host empty: every address; a name: its first address that listens). An
// invalid Fd with *error ("cannot resolve …", "cannot listen on HOST:PORT: …") otherwise.
Fd listen_on(const std::string& host, uint16_t port, std::string* error);
// The port a socket is bound to; 0 when unknown.
uint16_t local_port(int fd);

// One accept without waiting. fd: a connection (close-on-exec, non-blocking when asked); neither fd nor
// err: nobody waits, or the connection that waited was aborted; err: accept's errno (EMFILE, ENFILE,
// ENOBUFS, ENOMEM when out of descriptors or memory). *peer (when given): "ADDR:PORT".
struct Accepted {
  Fd fd;
  int err = 0;
};
Accepted accept_one(int listen_fd, bool nonblocking, std::string* peer = nullptr);

// One descriptor held back for accept_until: out of descriptors, accept fails while the connection
// waits and the listening socket stays readable; the spare is closed to accept that connection and close
// it at once (its peer sees the close instead of hanging), then opened again.
struct SpareFd {
  Fd fd;              // /dev/null
  size_t closed = 0;  // connections accepted and closed for want of a descriptor
  SpareFd();
};
// Waits for one connection until the deadline, honoured out of descriptors too (without a spare it then
// waits 50 ms at a time). fd: a connection; neither: the deadline came; err: the listening socket is
// unusable (EBADF, EINVAL, ENOTSOCK).
Accepted accept_until(int listen_fd, Clock::time_point deadline, std::string* peer, SpareFd* spare = nullptr);

// Starts a non-blocking connect to addr (close-on-exec); the step and errno when it failed at once.
Opened start_connect(const sockaddr* addr, socklen_t len);
// The outcome of a connect started: 0 once connected or while in progress, its errno when it failed
// (SO_ERROR; a failed getsockopt gives its own errno).
int connect_error(int fd);
// Connects to host:port (a name resolved on every try), retrying every `retry_every` until the deadline
// (the listener may start later, its name appear later); each try waits at most 5 s. A non-blocking
// socket, or an invalid Fd with *error (the last try's reason).
Fd connect_until(const std::string& host, uint16_t port, Clock::time_point deadline,
                 Clock::duration retry_every, std::string* error);

// TCP_NODELAY: a small message leaves at once instead of waiting for the previous one's acknowledgement.
void set_no_delay(int fd);

}  // namespace railscope::socket
