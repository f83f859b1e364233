// SPDX-License-Identifier: Apache-2.0
// The out-of-band TCP channel of a verbs connection: carries the handshake, then stays open for the
// connection's life so each end notices when the other goes away (peer.closed) instead of waiting
// forever on a receive. Everything is non-blocking: calls report "not yet" and are called again.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plugin/net/transport.h"
#include "plugin/net/verbs/setup/wire_limits.h"
#include "railscope/socket/fd.h"
#include "railscope/socket/frame_reader.h"

namespace railscope::net {
using railscope::socket::Fd;
struct SocketAddress;  // plugin/net/common/socket.h
}  // namespace railscope::net

namespace railscope::net::verbs {

struct ListenHandle;  // handshake.h
struct Message;       // handshake.h

// The listen handle's address, for the shared socket layer (plugin/net/common/socket.h: listen,
// accept, connect, socket options and error mapping are common to both engines; frames are read by
// railscope/socket/frame_reader.h; the message format is the verbs engine's own, handshake.h).
SocketAddress handle_address(const ListenHandle& h);

class Channel {
 public:
  Channel() = default;
  explicit Channel(Fd fd, std::string peer) : fd_(std::move(fd)), peer_(std::move(peer)) {}

  // Non-blocking connect finished? *ready=false while still connecting.
  Status connected(bool* ready);
  void send(const Message& m);
  // Writes what it can of the queued bytes; *done when nothing remains.
  Status flush(bool* done);
  // Reads what is available; a complete, valid message lands in *out.
  Status receive(std::optional<Message>* out);
  // peer.closed once the other end has gone (EOF or reset), even when it wrote bytes before closing
  // that nobody read; success otherwise.
  Status alive();

  int fd() const { return fd_.get(); }
  const std::string& peer() const { return peer_; }
  // Whether the last message header read names railscope's magic with another handshake version: the
  // peer is railscope of another release (receive() failed with peer.bad_handshake saying which).
  bool peer_speaks_other_version() const { return other_version_; }
  void set_peer(std::string p) { peer_ = std::move(p); }

 private:
  // The body's length a message header announces (decode_header: magic, version, type, bound).
  static std::optional<size_t> message_length(std::span<const std::byte> header, std::string* why);
  Status closed(const char* during);
  Fd fd_;
  std::string peer_;
  std::vector<std::byte> out_;
  size_t out_off_ = 0;
  socket::FrameReader in_{kMessageHeaderSize, kMaxMessageBody, message_length};
  bool other_version_ = false;
};

}  // namespace railscope::net::verbs
