// The eager protocol of the verbs engine: what travels and where, for connections whose two ends
// carry host memory only (no GPUDirect, so both sides may touch the bytes with the CPU).
//
// The receiver-driven protocol (send_comm.h, recv_comm.h) costs the receiver one clear-to-send per
// receive. Under soft-RoCE every message is CPU work on both hosts, and that clear-to-send doubles
// the work of a small ping-pong. The eager protocol removes it:
//   - a message of at most eager_max bytes is written with its header into the next slot of a ring
//     the receiver registered (RDMA write with immediate on QP 0); the receiver matches it to a
//     posted receive by tag, in order, and copies it out (or holds it until such a receive is posted);
//   - a larger message sends only its header (a request-to-send) the same way; once matched, the
//     receiver writes a clear-to-send for exactly that message into the sender's mailbox, and the
//     sender RDMA-writes the data straight into the receive buffer, split across the QPs, each QP's
//     part ending with an immediate that names the receive buffer;
//   - ring slots are credits: the receiver returns them in batches by writing how many leading slots
//     it has released into the sender's credit word.
// Messages of one tag are matched to receive buffers of that tag in posting order: the k-th send
// with tag T lands in the k-th buffer posted with tag T, which is also what the receiver-driven
// protocol (and NCCL's own) gives.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "plugin/net/verbs/handshake.h"

namespace railscope::net::verbs::eager {

inline constexpr int kRingSlots = 64;          // credits: ring messages in flight per connection
inline constexpr uint32_t kSignalEvery = 16;   // ring writes: one signalled completion per this many
inline constexpr size_t kMaxTargets = 64 * 8;  // receive buffers in flight (kFifoDepth x kMaxRecvs)
// Standing receives consumed by ring messages and data parts are given back in batches of this many
// (eager_queues.h sizes the pool of standing receives).
inline constexpr int kRepostBatch = 16;

enum Kind : uint32_t { kData = 1, kRequestToSend = 2 };

// At the start of every ring slot, written by the sender with the message.
struct Header {
  uint64_t seq;   // 1, 2, 3 ... per connection: which ring message this is
  uint64_t size;  // payload bytes (kData) or bytes to come (kRequestToSend)
  int32_t tag;
  uint32_t kind;  // Kind
  uint32_t req;   // the sender's request index: the mailbox entry the clear-to-send goes to
  uint32_t reserved;
};
static_assert(sizeof(Header) == 32);

// Written by the receiver into the sender's mailbox entry `req` when a request-to-send is matched.
struct alignas(64) ClearToSend {
  uint64_t addr;  // receive buffer
  uint64_t size;  // its capacity
  uint32_t rkey[kMaxDevsPerEnd];
  uint32_t target;  // what the data's immediate must name (receive slot x 8 + buffer)
  uint32_t status;  // kAccept, or kTooSmall when the buffer cannot hold the message
  uint64_t seq;     // the request-to-send's Header::seq (last written: marks the entry complete)
};
static_assert(sizeof(ClearToSend) == 64);
enum Status : uint32_t { kAccept = 0, kTooSmall = 1 };

// The sender's mailbox follows its receiver-driven FIFO in the same registered region:
// [FIFO][ClearToSend x kMaxTargets][credit word].
inline constexpr size_t kMailboxEntries = kMaxTargets;
inline constexpr size_t kMailboxBytes = sizeof(ClearToSend) * kMailboxEntries;
inline constexpr size_t kCreditWordBytes = 64;

// Immediate data: ring messages carry the ring slot; data parts of a large message carry the flag
// and the receive target.
inline constexpr uint32_t kImmData = 0x80000000u;
inline constexpr uint32_t imm_ring(uint64_t seq) { return static_cast<uint32_t>(seq % kRingSlots); }
inline constexpr uint32_t imm_target(uint32_t target) { return kImmData | target; }

// Bytes of one ring slot: the header and eager_max bytes, rounded to a cache line.
inline constexpr size_t slot_stride(uint32_t eager_max) {
  return (sizeof(Header) + eager_max + 63) / 64 * 64;
}

// Where ring message `seq` (1, 2, 3 ...) starts in the ring: its slot, kRingSlots slots round.
inline constexpr size_t slot_offset(uint64_t seq, uint32_t eager_max) {
  return static_cast<size_t>((seq - 1) % kRingSlots) * slot_stride(eager_max);
}
inline constexpr size_t ring_bytes(uint32_t eager_max) { return slot_stride(eager_max) * kRingSlots; }

// The peer RDMA-writes the ring whenever it likes, also after a message was checked and while it is
// held for a receive not yet posted. So the receiver copies a message's header out of the ring once,
// on arrival, checks the copy and from then on uses only the copy: the payload copied out later is
// bounded by the copied size, which keeps it inside the message's slot whatever the ring holds by then.
// `ring` is the whole registered ring (at least ring_bytes(eager_max)). Returns the copy when it is
// message `seq` as the protocol allows it (kind, size against eager_max, request index in range), else
// nullopt and *why.
std::optional<Header> take_header(std::span<const std::byte> ring, uint64_t seq, uint32_t eager_max,
                                  std::string* why);
// The payload bytes of message `seq` whose checked header copy says `size` (<= eager_max).
std::span<const std::byte> payload(std::span<const std::byte> ring, uint64_t seq, uint32_t eager_max,
                                   const Header& checked);

// Ring slots are released out of order (a message no receive has been posted for is held while later
// ones are copied out); the sender may reuse a slot only once every slot before it was released too.
// Tracks the released prefix.
class ReleasedPrefix {
 public:
  void release(uint64_t seq) { released_[(seq - 1) % kRingSlots] = true; }
  // Advances over released slots; returns the count of leading messages fully released.
  uint64_t advance() {
    while (released_[prefix_ % kRingSlots]) {
      released_[prefix_ % kRingSlots] = false;
      ++prefix_;
    }
    return prefix_;
  }
  uint64_t prefix() const { return prefix_; }

 private:
  bool released_[kRingSlots] = {};
  uint64_t prefix_ = 0;
};

// Whether the receiver should write its released count back now: in batches of half a ring, or at
// once when the sender may be about to wait (three quarters of the ring unreturned) and there is news.
inline constexpr bool credits_due(uint64_t released, uint64_t arrived, uint64_t returned) {
  if (released <= returned) return false;
  return released - returned >= kRingSlots / 2 || arrived - returned >= kRingSlots * 3 / 4;
}

// Closing a sender: its small messages were reported done once posted, so before it goes it learns
// whether the receiver has them. Any one of these settles a message: its ring write completed here
// (acknowledged by the receiver's NIC: the bytes are in the receiver's ring), the receiver released
// it (credit word), or the receiver, closing, said out of band how many it took (its CLOSING message,
// handshake.h). The last one needs no RDMA acknowledgement, which a receiver that closes and destroys
// its QPs first can no longer give.
struct CloseFacts {
  uint64_t posted = 0;            // ring messages posted
  uint64_t acked = 0;             // leading ones whose write completed here
  uint64_t credits = 0;           // leading ones the receiver released (credit word)
  std::optional<uint64_t> taken;  // the receiver's CLOSING message, as sent (checked here)
  bool peer_gone = false;         // its out-of-band socket closed, everything it sent before read
};
struct CloseVerdict {
  enum Kind { kSettled, kWait, kLost } kind = kWait;
  uint64_t missing = 0;        // messages not known to be with the receiver
  bool receiver_said = false;  // kLost: the receiver's CLOSING message counted fewer than were posted
};
// kSettled when every message is accounted for; kLost when no more news can come (the receiver said
// how many it took, or its socket closed without saying); kWait otherwise. A CLOSING count above what
// was posted is not believed.
inline CloseVerdict close_verdict(const CloseFacts& f) {
  const bool said = f.taken.has_value() && *f.taken <= f.posted;
  uint64_t settled = std::max(f.acked, f.credits);
  if (said) settled = std::max(settled, *f.taken);
  CloseVerdict v;
  v.missing = f.posted - std::min(f.posted, settled);
  if (v.missing == 0)
    v.kind = CloseVerdict::kSettled;
  else if (said || f.peer_gone)
    v.kind = CloseVerdict::kLost;
  v.receiver_said = said;
  return v;
}

}  // namespace railscope::net::verbs::eager
