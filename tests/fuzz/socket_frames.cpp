// SPDX-License-Identifier: Apache-2.0
// Fuzzes the frame reader every socket user of railscope shares (include/railscope/socket/frame_reader.h):
// a peer's bytes, cut into writes of any size, read through a real socket pair by the non-blocking
// reader, as the net plugin's out-of-band channel drives it.
//
// Input: byte 0 sets the largest body allowed (4 * byte 0), byte 1 the sizes of the writes (1..64 bytes,
// varying); the rest is the stream. The stream's format: 'F', the body's length (4 bytes, little-endian),
// the body. A reference parser walks the same stream.
// Properties: the reader returns exactly the frames the reference finds, in order, each body the stream's
// bytes; it refuses a frame exactly when its magic is wrong or its length over the maximum, and then
// holds no body; it never reads past the frame it returns (the socket still holds every later byte);
// the stream's end inside a frame, or at a frame's start, is `closed`.
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "railscope/socket/fd.h"
#include "railscope/socket/frame_reader.h"
#include "tests/fuzz/fuzz_check.h"

namespace rs = railscope::socket;

namespace {

constexpr size_t kHeader = 5;

uint32_t length_at(const uint8_t* p) {
  return uint32_t{p[1]} | uint32_t{p[2]} << 8 | uint32_t{p[3]} << 16 | uint32_t{p[4]} << 24;
}

std::optional<size_t> body_length(std::span<const std::byte> header, std::string* why) {
  if (header[0] != std::byte{'F'}) return *why = "bad magic", std::nullopt;
  return length_at(reinterpret_cast<const uint8_t*>(header.data()));
}

size_t unread(int fd) {
  int n = 0;
  ::ioctl(fd, FIONREAD, &n);
  return static_cast<size_t>(n);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t max_body = size_t{data[0]} * 4;
  const uint8_t chunk_seed = data[1];
  const uint8_t* stream = data + 2;
  const size_t len = size - 2;

  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) return 0;
  const rs::Fd reader_end(fds[0]);
  rs::Fd writer_end(fds[1]);
  rs::FrameReader reader(kHeader, max_body, body_length);

  size_t written = 0;   // bytes of the stream in the socket or read
  size_t consumed = 0;  // bytes of the stream in frames returned
  for (unsigned turn = 0;; ++turn) {
    if (written < len) {
      const size_t chunk = std::min<size_t>(len - written, 1 + (chunk_seed + turn * 7u) % 64);
      const ssize_t n = ::send(writer_end.get(), stream + written, chunk, MSG_NOSIGNAL);
      if (n > 0) written += static_cast<size_t>(n);
    }
    if (written == len) writer_end.reset();  // the peer closes after its last byte
    const rs::IoResult r = reader.read_available(reader_end.get());
    // The reference: the frame starting at `consumed`.
    const size_t left = len - consumed;
    const bool header_whole = left >= kHeader;
    const bool magic_ok = header_whole && stream[consumed] == 'F';
    const size_t body = header_whole ? length_at(stream + consumed) : 0;
    const bool refuse = header_whole && (!magic_ok || body > max_body);
    const bool whole = header_whole && !refuse && left - kHeader >= body;
    switch (r.status) {
      case rs::Io::pending: RS_FUZZ_CHECK(written < len, "pending though the peer closed"); continue;
      case rs::Io::done:
        RS_FUZZ_CHECK(whole, "a frame returned where the reference has none at %zu", consumed);
        RS_FUZZ_CHECK(reader.body().size() == body && reader.body().size() <= max_body, "body of %zu bytes",
                      reader.body().size());
        RS_FUZZ_CHECK(body == 0 || std::memcmp(reader.body().data(), stream + consumed + kHeader, body) == 0,
                      "the body is the stream's bytes");
        consumed += kHeader + body;
        RS_FUZZ_CHECK(unread(reader_end.get()) == written - consumed,
                      "read past its frame: %zu unread, %zu expected", unread(reader_end.get()),
                      written - consumed);
        continue;
      case rs::Io::refused:
        RS_FUZZ_CHECK(refuse, "refused a frame the reference accepts at %zu", consumed);
        RS_FUZZ_CHECK(reader.body().empty() && !reader.why().empty(), "a refusal holds no body and says why");
        return 0;
      case rs::Io::closed:
        RS_FUZZ_CHECK(written == len && !whole && !refuse, "closed at %zu of %zu", consumed, len);
        return 0;
      default: RS_FUZZ_CHECK(false, "the reader failed: errno %d", r.err);
    }
  }
}
