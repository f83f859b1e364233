// SPDX-License-Identifier: Apache-2.0
// Bounds-checked little-endian byte writer/reader for everything railscope puts on the wire (the
// listen handles, handshake messages), shared by both engines. A Reader never reads past its span: a short or
// malformed input turns the reader "bad" and every later read returns zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace railscope::net::wire {

// FNV-1a (32-bit) over bytes: the handles' checksum against corruption in transit (not a MAC).
// Constants from the FNV reference (http://www.isthe.com/chongo/tech/comp/fnv/).
inline uint32_t fnv1a(std::span<const std::byte> bytes) {
  uint32_t h = 2166136261u;
  for (std::byte b : bytes) {
    h ^= static_cast<uint8_t>(b);
    h *= 16777619u;
  }
  return h;
}

class Writer {
 public:
  void u8(uint8_t v) { bytes_.push_back(static_cast<std::byte>(v)); }
  void u16(uint16_t v) { put(v, 2); }
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void raw(std::span<const uint8_t> v) {
    for (uint8_t b : v) u8(b);
  }
  // Length-prefixed (u8) string; callers keep strings under 256 bytes.
  void str(std::string_view s) {
    size_t n = s.size() < 255 ? s.size() : 255;
    u8(static_cast<uint8_t>(n));
    for (size_t i = 0; i < n; ++i) u8(static_cast<uint8_t>(s[i]));
  }
  const std::vector<std::byte>& bytes() const { return bytes_; }
  std::vector<std::byte>& bytes() { return bytes_; }

 private:
  void put(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<std::byte> bytes_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}
  uint8_t u8() { return static_cast<uint8_t>(get(1)); }
  uint16_t u16() { return static_cast<uint16_t>(get(2)); }
  uint32_t u32() { return static_cast<uint32_t>(get(4)); }
  uint64_t u64() { return get(8); }
  void raw(std::span<uint8_t> out) {
    for (auto& b : out) b = u8();
  }
  // Reads a length-prefixed string of at most max_len printable ASCII characters; anything else
  // makes the reader bad.
  std::string str(size_t max_len) {
    size_t n = u8();
    if (n > max_len) {
      bad_ = true;
      return {};
    }
    std::string s;
    for (size_t i = 0; i < n && !bad_; ++i) {
      char c = static_cast<char>(u8());
      if (c < 0x20 || c > 0x7e) bad_ = true;
      s.push_back(c);
    }
    return bad_ ? std::string() : s;
  }
  bool bad() const { return bad_; }
  size_t remaining() const { return bad_ ? 0 : in_.size() - pos_; }

 private:
  uint64_t get(int n) {
    if (bad_ || in_.size() - pos_ < static_cast<size_t>(n)) {
      bad_ = true;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(in_[pos_ + static_cast<size_t>(i)]) << (8 * i);
    pos_ += static_cast<size_t>(n);
    return v;
  }
  std::span<const std::byte> in_;
  size_t pos_ = 0;
  bool bad_ = false;
};

}  // namespace railscope::net::wire
