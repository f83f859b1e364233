// SPDX-License-Identifier: Apache-2.0
// What every harness under tests/fuzz/ shares: a property check that stops the run (libFuzzer then
// saves the input as crash-<sha1>), and copies of parts of the input into allocations of exactly
// their size, so that AddressSanitizer reports any read past the part a decoder was given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define RS_FUZZ_CHECK(cond, ...)                                                         \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                                 \
      std::fprintf(stderr, "\n");                                                        \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

namespace railscope::fuzz {

// The input read front to back; reads past the end give zeros (and `empty()` turns true).
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint64_t le(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(u8()) << (8 * i);
    return v;
  }
  bool empty() const { return pos_ >= size_; }
  size_t remaining() const { return pos_ < size_ ? size_ - pos_ : 0; }
  // The next n bytes (fewer at the end) in a vector of exactly that size.
  std::vector<std::byte> bytes(size_t n) {
    if (n > remaining()) n = remaining();
    std::vector<std::byte> out(n);
    if (n > 0) std::memcpy(out.data(), data_ + pos_, n);
    pos_ += n;
    return out;
  }
  std::vector<std::byte> rest() { return bytes(remaining()); }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace railscope::fuzz
