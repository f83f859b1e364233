// SPDX-License-Identifier: Apache-2.0
#include "railscope/socket/frame_reader.h"

#include <poll.h>

#include <utility>

namespace railscope::socket {

FrameReader::FrameReader(size_t header_bytes, size_t max_body, BodyLength body_length)
    : max_body_(max_body), body_length_(std::move(body_length)), header_(header_bytes) {}

void FrameReader::restart() {
  header_got_ = 0;
  have_length_ = false;
  complete_ = false;
  body_.clear();
  body_got_ = 0;
  why_.clear();
}

IoResult FrameReader::read_available(int fd) {
  if (complete_) restart();
  if (!have_length_) {
    if (const IoResult r = recv_some(fd, header_, &header_got_); !r.ok()) return r;
    const std::optional<size_t> length = body_length_(header_, &why_);
    if (!length) return {Io::refused};
    // Checked before the body is allocated: the length is the peer's word.
    if (*length > max_body_) {
      why_ = "a frame body of " + std::to_string(*length) + " bytes is over the maximum of " +
             std::to_string(max_body_);
      return {Io::refused};
    }
    body_.assign(*length, std::byte{0});
    body_got_ = 0;
    have_length_ = true;
  }
  if (const IoResult r = recv_some(fd, body_, &body_got_); !r.ok()) return r;
  complete_ = true;
  return {};
}

IoResult FrameReader::read(int fd, Clock::time_point deadline) {
  for (;;) {
    const IoResult r = read_available(fd);
    if (r.status != Io::pending) return r;
    if (const IoResult w = wait_for(fd, POLLIN, deadline); !w.ok()) return w;
  }
}

}  // namespace railscope::socket
