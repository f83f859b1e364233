// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/setup/oob_channel.h"

#include "plugin/net/common/socket.h"
#include "plugin/net/verbs/setup/handshake.h"

#include <fmt/format.h>

#include <cerrno>

namespace railscope::net::verbs {
SocketAddress handle_address(const ListenHandle& h) { return SocketAddress{h.family, h.addr, h.port}; }

Status Channel::connected(bool* ready) { return connect_finished(fd_.get(), peer_, ready); }

void Channel::send(const Message& m) {
  auto bytes = encode_message(m);
  out_.insert(out_.end(), bytes.begin(), bytes.end());
}

Status Channel::closed(const char* during) {
  return Status::fail(ncclRemoteError, "peer.closed",
                      fmt::format("{} closed the connection {}", peer_, during));
}

Status Channel::flush(bool* done) {
  const socket::IoResult r = socket::send_some(fd_.get(), out_, &out_off_);
  if (r.status == socket::Io::failed) {
    if (r.err == EPIPE || r.err == ECONNRESET) return closed("during the handshake");
    return io_failure("send", -1, r.err, peer_, 0);
  }
  if (out_off_ == out_.size()) {
    out_.clear();
    out_off_ = 0;
  }
  *done = out_.empty();
  return Status::success();
}

std::optional<size_t> Channel::message_length(std::span<const std::byte> header, std::string* why) {
  MessageType type{};
  return decode_header(header.first<kMessageHeaderSize>(), &type, why);
}

Status Channel::receive(std::optional<Message>* out) {
  out->reset();
  const socket::IoResult r = in_.read_available(fd_.get());
  switch (r.status) {
    case socket::Io::pending: return Status::success();
    case socket::Io::closed: return closed("during the handshake");
    case socket::Io::failed:
      if (r.err == ECONNRESET) return closed("during the handshake (reset)");
      return io_failure("recv", -1, r.err, peer_, 0);
    default: break;
  }
  const auto header = in_.header().first<kMessageHeaderSize>();
  const uint16_t version = header_version(header);
  other_version_ = version != 0 && version != kProtocolVersion;
  if (r.status == socket::Io::refused)
    return Status::fail(ncclRemoteError, "peer.bad_handshake", fmt::format("from {}: {}", peer_, in_.why()),
                        other_version_ ? kSameReleaseFix : "");
  MessageType type{};
  std::string why;
  (void)decode_header(header, &type, &why);  // accepted when it was read: only its type is wanted here
  auto m = decode_body(type, in_.body(), &why);
  if (!m) return Status::fail(ncclRemoteError, "peer.bad_handshake", fmt::format("from {}: {}", peer_, why));
  *out = std::move(m);
  return Status::success();
}

Status Channel::alive() { return peer_alive(fd_.get(), peer_); }

}  // namespace railscope::net::verbs
