// The out-of-band TCP channel of a verbs connection: carries the handshake, then stays open for the
// connection's life so each end notices when the other goes away (peer.closed) instead of waiting
// forever on a receive. Everything is non-blocking: calls report "not yet" and are called again.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "plugin/net/fd.h"
#include "plugin/net/transport.h"
#include "plugin/net/verbs/handshake.h"

namespace railscope::net::verbs {

// A non-blocking listening socket on all addresses; *port receives its port.
Status open_listener(Fd* out, uint16_t* port, int family);
// Non-blocking accept: an empty Fd when nobody is waiting.
Status accept_one(const Fd& listener, Fd* out);
// Starts a non-blocking connect to the handle's address.
Status start_connect(const ListenHandle& h, Fd* out);
// The IPv4 address the listener advertises when the device's GID carries none: the first
// non-loopback IPv4 interface address, else 127.0.0.1 (host byte order bytes a.b.c.d in out[0..3]).
void fallback_address(std::array<uint8_t, 16>* out);

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
  // peer.closed once the other end has gone (EOF or reset); success otherwise.
  Status alive();

  int fd() const { return fd_.get(); }
  const std::string& peer() const { return peer_; }
  void set_peer(std::string p) { peer_ = std::move(p); }

 private:
  Status closed(const char* during);
  Fd fd_;
  std::string peer_;
  std::vector<std::byte> out_;
  size_t out_off_ = 0;
  std::array<std::byte, kMessageHeaderSize> header_{};
  size_t header_got_ = 0;
  std::vector<std::byte> body_;
  size_t body_got_ = 0;
  MessageType type_ = MessageType::Hello;
  bool have_header_ = false;
};

}  // namespace railscope::net::verbs
