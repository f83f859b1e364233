// SPDX-License-Identifier: Apache-2.0
// What the two ends of a verbs connection tell each other, over the out-of-band channel they keep, when
// QPs of one port fail and their traffic moves to the connection's other ports (docs/failover.md):
//   sender   -> MOVE     (epoch e: these QPs failed; nothing more is posted on them)
//   receiver -> HELD     (epoch e: what arrived, once its own QPs on that port are drained: the next ring
//                         message it expects and, per large message in flight, the parts it holds)
// and, when a port that failed is ACTIVE again:
//   either   -> PROBE    (epoch e: these QPs were re-created; probe them)
//   sender   -> RESTORED (epoch e: the probe passed, traffic may return to them)
//   receiver -> RESTORED (receiver-driven protocol: the first receive whose immediates the QPs carry)
// The body travels in a handshake message of its own type (handshake.h, MessageType::Failover); it is
// decoded here, on a copy, field by field: a count above its bound, an unknown kind or version, a QP
// outside the connection, targets out of order or repeated, or bytes left over refuse the message. Pure:
// no verbs, no sockets, so it is unit-tested and fuzzed directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace railscope::net::verbs::failover {

// The failover body's own version: a peer of another one is refused (the handshake version already
// says both ends run the same release; this one keeps the body's layout checkable on its own).
inline constexpr uint8_t kVersion = 2;
// Receive buffers in flight per connection (kFifoDepth x kMaxRecvs): a HELD names at most this many.
inline constexpr size_t kMaxHeld = 256;
// QPs a notice can name, one bit each in a 64-bit mask: fewer than a connection may have (kMaxQps in
// wire_limits.h, 8 devices x 16 QPs), so a connection of more than 64 QPs is one failover cannot serve.
inline constexpr size_t kMaxQps = 64;

// Every QP of a connection of `nqps` QPs, one bit each (all 64 from 64 on).
inline constexpr uint64_t all_qps(size_t nqps) {
  return nqps >= 64 ? ~uint64_t{0} : (uint64_t{1} << nqps) - 1;
}

enum class Kind : uint8_t { Move = 1, Held = 2, Probe = 3, Restored = 4 };

// A large message the receiver still waits for, and the parts of its data it holds: bit q is the part
// that QP q carries (chunk_of), whichever QP it arrived on. A message the sender has in flight that is
// not listed, or listed under another seq, was received whole: its target moved on.
struct PartsHeld {
  uint16_t target = 0;  // receive slot x 8 + buffer, as the data's immediate names it
  uint32_t seq = 0;     // low 32 bits of the clear-to-send's seq: which message for that target
  uint64_t parts = 0;   // may be 0: waited for, nothing arrived
  bool operator==(const PartsHeld&) const = default;
};

struct Notice {
  Kind kind = Kind::Move;
  // 1, 2, 3 … per connection: each failover or restoration is one epoch, and every notice names the
  // one it belongs to; an end accepts only the epoch it expects.
  uint32_t epoch = 0;
  uint64_t qps = 0;  // the QPs concerned (bit q: QP q of the connection); never 0
  // Held: the next eager ring message the receiver expects (0: receiver-driven). Restored, a
  // receiver-driven receiver's answer: the clear-to-send seq of its first receive whose immediates the
  // restored QPs carry (the sender's RESTORED: 0).
  uint64_t next_seq = 0;
  std::vector<PartsHeld> held;  // Held: targets strictly increasing, at most kMaxHeld
  bool operator==(const Notice&) const = default;
};

std::vector<std::byte> encode(const Notice& n);
// nullopt with *why when the bytes are not a valid notice for a connection of `nqps` QPs (1..kMaxQps):
// every QP bit, in `qps` and in each PartsHeld, must name one of them, and `qps` may not name them all
// (a connection with no QP left has nothing to move to).
std::optional<Notice> decode(std::span<const std::byte> body, size_t nqps, std::string* why);

// The bytes a HELD body takes at most: the decoder's bound, and the handshake's kMaxMessageBody must
// hold it (static_assert where the message type is carried).
inline constexpr size_t kMaxBodyBytes = 1 + 1 + 4 + 8 + 8 + 2 + kMaxHeld * (2 + 4 + 8);

}  // namespace railscope::net::verbs::failover
