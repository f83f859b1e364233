// The TCP rendezvous at rank 0: every other rank connects, sends its node report and waits for the
// verdict. The port is reachable by anything on the network, so rank 0 treats every byte as hostile:
// frames are length-prefixed with a magic and a cap and, with the job's secret, authenticated
// (frame_auth.h); every read has a deadline, a frame is copied once into a bounded buffer and parsed from
// that copy; anything malformed or unauthenticated is refused, logged and closed.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "frame_auth.h"

namespace railscope::preflight {

using Clock = std::chrono::steady_clock;

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Sends one frame sealed by the connection's auth; false with *error on failure (peer gone, deadline).
bool send_frame(int fd, FrameAuth& auth, FrameType type, const std::string& payload,
                Clock::time_point deadline, std::string* error);
// Receives one frame opened by the connection's auth; nullopt with *error on a bad magic, an unknown
// type, a length over kMaxFrame, a tag or rank that does not match, EOF or the deadline.
std::optional<Frame> receive_frame(int fd, FrameAuth& auth, Clock::time_point deadline, std::string* error);
// The hellos that start a connection: each end sends its own, then reads the peer's. false with *error
// (the peer's mode differs: one end has no secret).
bool exchange_hellos(int fd, FrameAuth& auth, Clock::time_point deadline, std::string* error);

// Whether the socket's own address (local) or its peer's is a loopback address (127.0.0.0/8, ::1,
// ::ffff:127.0.0.0/104).
bool on_loopback(int fd, bool local);

// Listens on bind_host:port (empty host: every address), backlog SOMAXCONN; invalid Fd with *error.
Fd listen_on(const std::string& bind_host, uint16_t port, std::string* error);
// One descriptor held back for accept_until: out of descriptors (EMFILE, ENFILE), accept would fail
// while the connection waits and the listening socket stays readable; the spare is closed to accept that
// connection and close it at once (its peer sees the close instead of hanging), then opened again.
struct SpareFd {
  Fd fd;              // /dev/null
  size_t closed = 0;  // connections accepted and closed for want of a descriptor
  SpareFd();
};

// Waits for one connection until the deadline (honoured out of descriptors too); invalid Fd on timeout.
// *peer = "ADDR:PORT". Without a spare, out of descriptors it waits 50 ms at a time.
Fd accept_until(int listen_fd, Clock::time_point deadline, std::string* peer, SpareFd* spare = nullptr);
// Connects to host:port, retrying (rank 0 may start later) until the deadline.
Fd connect_until(const std::string& host, uint16_t port, Clock::time_point deadline, std::string* error);

}  // namespace railscope::preflight
