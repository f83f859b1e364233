// SPDX-License-Identifier: Apache-2.0
// Reading length-prefixed frames that a peer writes: a fixed-size header, then a body whose length the
// header announces. The peer's bytes are copied once, into the reader's own buffers, and only that copy
// is checked and handed on. The header's parser (the message format is the caller's: its magic, type,
// length field, authentication) says how long the body is; a length over the reader's maximum is refused
// before anything is allocated for it, so a peer cannot make the reader allocate more than
// max_body bytes whatever it announces. The reader never reads past the end of its frame: the next
// frame's bytes stay in the socket.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "railscope/socket/deadline_io.h"

namespace railscope::socket {

// The body's length announced by a header (the reader's copy), or nullopt with *why when the header is
// refused (bad magic, unknown type, another version).
using BodyLength = std::function<std::optional<size_t>(std::span<const std::byte> header, std::string* why)>;

class FrameReader {
 public:
  FrameReader(size_t header_bytes, size_t max_body, BodyLength body_length);

  // Reads what the socket holds without waiting, up to the end of one frame. done: a frame is complete
  // (header(), body()); pending: not yet, call again when poll says readable; closed, failed; refused
  // with why(): the header was refused or announced more than max_body. After done the next call
  // starts the next frame; after anything but done and pending the connection is to be dropped.
  IoResult read_available(int fd);
  // One whole frame before the deadline (timed_out otherwise).
  IoResult read(int fd, Clock::time_point deadline);

  std::span<const std::byte> header() const { return header_; }
  std::span<const std::byte> body() const { return body_; }
  // The frame's body, taken out of the reader (valid after done).
  std::vector<std::byte> take_body() { return std::move(body_); }
  const std::string& why() const { return why_; }

 private:
  void restart();

  size_t max_body_;
  BodyLength body_length_;
  std::vector<std::byte> header_;  // sized once, at construction
  size_t header_got_ = 0;
  bool have_length_ = false;
  bool complete_ = false;
  std::vector<std::byte> body_;
  size_t body_got_ = 0;
  std::string why_;
};

}  // namespace railscope::socket
