// SPDX-License-Identifier: Apache-2.0
// What netbench puts in every message and how the receiver checks it, byte for byte.
//
// A message of `size` bytes with sequence number `seq` carries the pseudo-random bytes of pattern
// p = seq % pattern_count (seeded by the run's seed). Messages of 24 bytes or more also carry `seq`
// in their first 8 bytes and a checksum of the bytes between header and trailer in their last 8.
// Consecutive occupants of one receive buffer always carry different patterns, so data that was
// not delivered (stale bytes from the previous message) is caught as well as corrupted data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace railscope::netbench {

constexpr size_t kHeaderBytes = 8;
constexpr size_t kTrailerBytes = 8;
constexpr size_t kMinFramedSize = 24;  // below this a message is pattern bytes only

// 64-bit checksum of a byte range (word-wise mixing; any single changed byte changes it).
uint64_t checksum(const void* data, size_t size, uint64_t seed);

class Payload {
 public:
  Payload(uint64_t seed, uint32_t pattern_count)
      : seed_(seed), patterns_(pattern_count ? pattern_count : 1) {}

  uint32_t pattern_of(uint64_t seq) const { return static_cast<uint32_t>(seq % patterns_); }

  // Writes the whole message for pattern `pattern` (header left for stamp()).
  void fill(void* buf, size_t size, uint32_t pattern) const;
  // Sets the sequence number of a filled buffer (cheap: the per-message part of sending).
  static void stamp(void* buf, size_t size, uint64_t seq);

  struct Mismatch {
    size_t offset = 0;
    unsigned expected = 0;
    unsigned got = 0;
    std::string what;  // "header", "checksum", "payload"
  };
  // Checks a received message against what message `seq` must contain.
  std::optional<Mismatch> verify(const void* buf, size_t size, uint64_t seq) const;

  static std::string describe(const Mismatch& m, uint64_t seq, size_t size);

 private:
  uint64_t pattern_key(uint32_t pattern) const;
  uint64_t seed_;
  uint32_t patterns_;
};

}  // namespace railscope::netbench
