// SPDX-License-Identifier: Apache-2.0
// The out-of-band TCP channel between the two netbench processes: carries the run's parameters,
// the plugin's 128-byte listen handles and per-size results — what NCCL's bootstrap does for a job.
// Framed messages (magic, type, length) over the shared socket layer (railscope/socket/); every read has
// a deadline; garbage is an error.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "railscope/socket/fd.h"

namespace railscope::netbench {

// A failure netbench reports (the plugin's own diagnosis, if any, is in its log lines).
struct BenchError : std::runtime_error {
  explicit BenchError(const std::string& what) : std::runtime_error(what) {}
};

using Clock = std::chrono::steady_clock;

class OobSocket {
 public:
  OobSocket() = default;
  explicit OobSocket(socket::Fd fd) : fd_(std::move(fd)) {}

  int fd() const { return fd_.get(); }

  // True when a message (or EOF) is waiting; never blocks.
  bool readable() const;

  // Sends one framed message. No deadline: the peer is netbench's other half, which reads every
  // message, though possibly only after a long transfer.
  void send(uint32_t type, std::span<const unsigned char> payload);
  // Receives one framed message of `type` (any other type, a bad frame, EOF or the deadline: error).
  std::vector<unsigned char> receive(uint32_t type, std::chrono::milliseconds timeout);

  // Receives the next framed message, whatever its type.
  std::pair<uint32_t, std::vector<unsigned char>> receive_any(std::chrono::milliseconds timeout);

  template <class T>
  void send_struct(uint32_t type, const T& value) {
    send(type, {reinterpret_cast<const unsigned char*>(&value), sizeof value});
  }
  template <class T>
  T receive_struct(uint32_t type, std::chrono::milliseconds timeout);

 private:
  socket::Fd fd_;
};

template <class T>
T OobSocket::receive_struct(uint32_t type, std::chrono::milliseconds timeout) {
  const auto bytes = receive(type, timeout);
  if (bytes.size() != sizeof(T))
    throw BenchError("out-of-band message " + std::to_string(type) + " has " + std::to_string(bytes.size()) +
                     " bytes, expected " + std::to_string(sizeof(T)));
  T value;
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<unsigned char*>(&value));
  return value;
}

class OobListener {
 public:
  // Binds host:port (port 0 = any free port; host empty = all addresses).
  static OobListener bind(const std::string& host, uint16_t port);
  // Adopts an already listening socket (the --pair driver hands one to its server child).
  static OobListener adopt(int fd);
  uint16_t port() const;
  int fd() const { return fd_.get(); }
  OobSocket accept(std::chrono::milliseconds timeout);

 private:
  socket::Fd fd_;
};

// Connects to host:port, retrying refused connections until the timeout (the server may start later).
OobSocket oob_connect(const std::string& host, uint16_t port, std::chrono::milliseconds timeout);

}  // namespace railscope::netbench
