// SPDX-License-Identifier: Apache-2.0
#include "oob.h"

#include <poll.h>

#include <cerrno>
#include <cstring>

#include "plan_checks.h"
#include "protocol.h"
#include "railscope/socket/endpoints.h"
#include "railscope/socket/frame_reader.h"

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

// The header's fields, from the reader's copy.
Frame frame_of(std::span<const std::byte> header) {
  Frame f{};
  std::memcpy(&f, header.data(), sizeof f);
  return f;
}

}  // namespace

bool OobSocket::readable() const {
  pollfd pfd{fd_.get(), POLLIN, 0};
  return ::poll(&pfd, 1, 0) > 0;
}

void OobSocket::send(uint32_t type, std::span<const unsigned char> payload) {
  const Frame f{kMagic, type, static_cast<uint32_t>(payload.size())};
  std::vector<std::byte> bytes(sizeof f + payload.size());
  std::memcpy(bytes.data(), &f, sizeof f);
  if (!payload.empty()) std::memcpy(bytes.data() + sizeof f, payload.data(), payload.size());
  const socket::IoResult r = socket::send_all(fd_.get(), bytes, Clock::time_point::max());
  if (!r.ok()) throw BenchError("out-of-band send failed: " + errno_text(r.err) + " (peer gone?)");
}

std::pair<uint32_t, std::vector<unsigned char>> OobSocket::receive_any(std::chrono::milliseconds timeout) {
  socket::FrameReader reader(
      sizeof(Frame), kMaxPayload,
      [](std::span<const std::byte> header, std::string* why) -> std::optional<size_t> {
        const Frame f = frame_of(header);
        if (f.magic != kMagic) return *why = "out-of-band peer is not netbench (bad magic)", std::nullopt;
        if (f.length > kMaxPayload)
          return *why = "out-of-band message too large: " + std::to_string(f.length), std::nullopt;
        return f.length;
      });
  const socket::IoResult r = reader.read(fd_.get(), Clock::now() + timeout);
  switch (r.status) {
    case socket::Io::done: break;
    case socket::Io::timed_out: throw BenchError("out-of-band peer sent nothing before the deadline");
    case socket::Io::closed:
      throw BenchError("out-of-band peer closed the connection (peer process exited?)");
    case socket::Io::refused: throw BenchError(reader.why());
    default: throw BenchError("out-of-band receive failed: " + errno_text(r.err));
  }
  const auto body = reader.body();
  const auto* bytes = reinterpret_cast<const unsigned char*>(body.data());
  return {frame_of(reader.header()).type, std::vector<unsigned char>(bytes, bytes + body.size())};
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
  std::string error;
  OobListener l;
  l.fd_ = socket::listen_on(host, port, &error);
  if (!l.fd_) throw BenchError(error);
  return l;
}

OobListener OobListener::adopt(int fd) {
  OobListener l;
  l.fd_.reset(fd);
  return l;
}

uint16_t OobListener::port() const { return socket::local_port(fd_.get()); }

OobSocket OobListener::accept(std::chrono::milliseconds timeout) {
  socket::Accepted a = socket::accept_until(fd_.get(), Clock::now() + timeout, nullptr);
  if (a.err != 0) throw BenchError("out-of-band accept failed: " + errno_text(a.err));
  if (!a.fd)
    throw BenchError("no netbench client connected within " + std::to_string(timeout.count()) + " ms");
  socket::set_no_delay(a.fd.get());
  return OobSocket(std::move(a.fd));
}

OobSocket oob_connect(const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
  std::string error;
  socket::Fd fd =
      socket::connect_until(host, port, Clock::now() + timeout, std::chrono::milliseconds(50), &error);
  if (!fd)
    throw BenchError("cannot reach the netbench server at " + host + ":" + std::to_string(port) + ": " +
                     error);
  socket::set_no_delay(fd.get());
  return OobSocket(std::move(fd));
}

}  // namespace railscope::netbench
