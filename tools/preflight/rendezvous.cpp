// SPDX-License-Identifier: Apache-2.0
// The rendezvous' frames over the shared socket layer (see rendezvous.h).
#include "rendezvous.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <span>
#include <string_view>

#include "railscope/socket/frame_reader.h"

namespace railscope::preflight {
namespace {

std::string io_error(const socket::IoResult& r, bool sending) {
  switch (r.status) {
    case socket::Io::timed_out: return sending ? "send timed out" : "timed out waiting for data";
    case socket::Io::closed: return "connection closed";
    default: return std::string(sending ? "send failed: " : "receive failed: ") + std::strerror(r.err);
  }
}

std::string_view text_of(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

bool send_frame(int fd, FrameAuth& auth, FrameType type, const std::string& payload,
                Clock::time_point deadline, std::string* error) {
  if (payload.size() > kMaxFrame) return *error = "message larger than the frame cap", false;
  const std::string bytes = auth.seal(type, payload);
  if (bytes.empty()) return *error = "cannot seal the message (no handshake, or no random nonce)", false;
  const socket::IoResult r = socket::send_all(fd, std::as_bytes(std::span(bytes)), deadline);
  if (!r.ok()) return *error = io_error(r, true), false;
  return true;
}

std::optional<Frame> receive_frame(int fd, FrameAuth& auth, Clock::time_point deadline, std::string* error) {
  // The largest body body_size() allows: a full payload and its tag.
  socket::FrameReader reader(kHeaderBytes, size_t{kMaxFrame} + kTagBytes,
                             [&](std::span<const std::byte> header, std::string* why) {
                               return auth.body_size(text_of(header), why);
                             });
  const socket::IoResult r = reader.read(fd, deadline);
  if (r.status == socket::Io::refused) return *error = reader.why(), std::nullopt;
  if (!r.ok()) return *error = io_error(r, false), std::nullopt;
  return auth.open(text_of(reader.header()), text_of(reader.body()), error);
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

Fd connect_until(const std::string& host, uint16_t port, Clock::time_point deadline, std::string* error) {
  Fd c = socket::connect_until(host, port, deadline, std::chrono::milliseconds(200), error);
  if (!c) *error = "cannot reach rank 0 at " + host + ":" + std::to_string(port) + " (" + *error + ")";
  return c;
}

}  // namespace railscope::preflight
