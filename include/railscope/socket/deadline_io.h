// SPDX-License-Identifier: Apache-2.0
// Moving bytes over a stream socket with a deadline: everything to send sent, exactly the bytes asked
// for received, or the reason why not. Every call works on blocking and non-blocking descriptors alike
// (poll, then send/recv with MSG_DONTWAIT), so one caller's socket mode never decides another's wait.
// The *_some calls never wait: an event loop (many descriptors, or a caller that must not block) calls
// them when poll says the descriptor is ready and keeps its own place in the buffer.
#pragma once

#include <chrono>
#include <cstddef>
#include <span>

namespace railscope::socket {

using Clock = std::chrono::steady_clock;

// How an I/O call ended.
enum class Io {
  done,       // everything asked for moved (a frame: one complete frame read)
  pending,    // non-blocking calls only: nothing more can move now; call again when poll says ready
  timed_out,  // the deadline came first
  closed,     // the peer closed its end (a read saw end of stream)
  failed,     // a system call failed: err holds its errno
  refused,    // frames only: the header was refused, or announced a body over the maximum
};

struct IoResult {
  Io status = Io::done;
  int err = 0;  // errno when status is failed
  bool ok() const { return status == Io::done; }
};

// Waits until fd is ready for `events` (POLLIN, POLLOUT). done when ready (or in error or hung up: the
// next send or recv says which), timed_out at the deadline, failed when poll itself fails. A deadline of
// Clock::time_point::max() waits for ever.
IoResult wait_for(int fd, short events, Clock::time_point deadline);

// Sends data[*sent..] without waiting; *sent advances. done when all is sent, pending when the socket's
// buffer is full, failed otherwise (EPIPE, ECONNRESET: the peer is gone). Never raises SIGPIPE.
IoResult send_some(int fd, std::span<const std::byte> data, size_t* sent);
// Receives into data[*got..] without waiting; *got advances. done when data is full, pending when
// nothing more has arrived, closed at end of stream, failed otherwise.
IoResult recv_some(int fd, std::span<std::byte> data, size_t* got);

// All of data sent before the deadline.
IoResult send_all(int fd, std::span<const std::byte> data, Clock::time_point deadline);
// Exactly data.size() bytes received before the deadline (never more: what follows stays in the socket).
IoResult recv_exact(int fd, std::span<std::byte> data, Clock::time_point deadline);

}  // namespace railscope::socket
