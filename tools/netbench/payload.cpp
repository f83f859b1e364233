// SPDX-License-Identifier: Apache-2.0
#include "payload.h"

#include <fmt/format.h>

#include <cstring>

namespace railscope::netbench {

namespace {

uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

// Word i of a pattern stream.
uint64_t word_at(uint64_t key, size_t i) { return mix(key + (static_cast<uint64_t>(i) + 1) * kGolden); }

uint64_t load64(const unsigned char* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

// Byte `offset` of a pattern stream (little-endian words).
unsigned char byte_at(uint64_t key, size_t offset) {
  return static_cast<unsigned char>(word_at(key, offset / 8) >> (8 * (offset % 8)));
}

}  // namespace

uint64_t checksum(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = mix(seed ^ (size * kGolden));
  size_t i = 0;
  for (; i + 8 <= size; i += 8) h = (h ^ mix(load64(p + i))) * 0x100000001b3ULL + kGolden;
  uint64_t tail = 0;
  for (size_t j = 0; i + j < size; ++j) tail |= static_cast<uint64_t>(p[i + j]) << (8 * j);
  return mix(h ^ mix(tail ^ size));
}

uint64_t Payload::pattern_key(uint32_t pattern) const { return mix(seed_ ^ mix(pattern + 0x51ed270b27ULL)); }

void Payload::fill(void* buf, size_t size, uint32_t pattern) const {
  auto* p = static_cast<unsigned char*>(buf);
  const uint64_t key = pattern_key(pattern);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    const uint64_t w = word_at(key, i / 8);
    std::memcpy(p + i, &w, sizeof w);
  }
  for (; i < size; ++i) p[i] = byte_at(key, i);
  if (size >= kMinFramedSize) {
    const size_t body = size - kHeaderBytes - kTrailerBytes;
    const uint64_t sum = checksum(p + kHeaderBytes, body, key);
    std::memcpy(p + size - kTrailerBytes, &sum, sizeof sum);
  }
}

void Payload::stamp(void* buf, size_t size, uint64_t seq) {
  if (size >= kMinFramedSize) std::memcpy(buf, &seq, sizeof seq);
}

std::optional<Payload::Mismatch> Payload::verify(const void* buf, size_t size, uint64_t seq) const {
  const auto* p = static_cast<const unsigned char*>(buf);
  const uint64_t key = pattern_key(pattern_of(seq));
  size_t begin = 0;
  size_t end = size;
  if (size >= kMinFramedSize) {
    const uint64_t got_seq = load64(p);
    if (got_seq != seq) {
      for (size_t i = 0; i < kHeaderBytes; ++i) {
        const auto want = static_cast<unsigned char>(seq >> (8 * i));
        if (p[i] != want) return Mismatch{i, want, p[i], "header (sequence number)"};
      }
    }
    begin = kHeaderBytes;
    end = size - kTrailerBytes;
    const uint64_t want_sum = checksum(p + begin, end - begin, key);
    if (load64(p + end) != want_sum) {
      // Find the first differing byte for the report; the checksum itself is the verdict.
      for (size_t i = begin; i < end; ++i)
        if (p[i] != byte_at(key, i)) return Mismatch{i, byte_at(key, i), p[i], "payload (checksum differs)"};
      for (size_t i = 0; i < kTrailerBytes; ++i) {
        const auto want = static_cast<unsigned char>(want_sum >> (8 * i));
        if (p[end + i] != want) return Mismatch{end + i, want, p[end + i], "checksum trailer"};
      }
    }
  }
  // Byte-for-byte comparison with the pattern (words where aligned to the stream).
  size_t i = begin;
  for (; i < end && i % 8 != 0; ++i)
    if (p[i] != byte_at(key, i)) return Mismatch{i, byte_at(key, i), p[i], "payload"};
  for (; i + 8 <= end; i += 8) {
    if (load64(p + i) != word_at(key, i / 8)) {
      for (size_t j = i; j < i + 8; ++j)
        if (p[j] != byte_at(key, j)) return Mismatch{j, byte_at(key, j), p[j], "payload"};
    }
  }
  for (; i < end; ++i)
    if (p[i] != byte_at(key, i)) return Mismatch{i, byte_at(key, i), p[i], "payload"};
  return std::nullopt;
}

std::string Payload::describe(const Mismatch& m, uint64_t seq, size_t size) {
  return fmt::format("message {} ({} B): {} differs at byte {}: expected 0x{:02x}, got 0x{:02x}", seq, size,
                     m.what, m.offset, m.expected, m.got);
}

}  // namespace railscope::netbench
