// SPDX-License-Identifier: Apache-2.0
// Well-formed UTF-8 (see railscope/core/utf8.h).
#include "railscope/core/utf8.h"

namespace railscope::utf8 {
namespace {
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// What s[i] stands for in well-formed text: its sequence, or U+FFFD for a byte that starts none; *consumed:
// how many bytes of s that is.
std::string_view piece_at(std::string_view s, size_t i, size_t* consumed) {
  const size_t n = sequence_length(s, i);
  *consumed = n == 0 ? 1 : n;
  return n == 0 ? kReplacement : s.substr(i, n);
}
}  // namespace

size_t sequence_length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}

void append_or_replacement(std::string& out, std::string_view s, size_t& i) {
  size_t consumed = 0;
  out += piece_at(s, i, &consumed);
  i += consumed;
}

std::string well_formed(std::string_view s, size_t max_bytes) {
  std::string out;
  out.reserve(s.size() < max_bytes ? s.size() : max_bytes);
  for (size_t i = 0; i < s.size();) {
    size_t consumed = 0;
    const std::string_view piece = piece_at(s, i, &consumed);
    if (out.size() + piece.size() > max_bytes) break;
    out += piece;
    i += consumed;
  }
  return out;
}

}  // namespace railscope::utf8
