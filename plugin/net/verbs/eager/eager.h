// SPDX-License-Identifier: Apache-2.0
// The eager protocol of the verbs engine: what travels and where, for connections whose two ends
// carry host memory only (no GPUDirect, so both sides may touch the bytes with the CPU).
//
// The receiver-driven protocol (send_comm.h, recv_comm.h) costs the receiver one clear-to-send per
// receive. Under soft-RoCE every message is CPU work on both hosts, and that clear-to-send doubles
// the work of a small ping-pong. The eager protocol removes it:
//   - a message of at most eager_max bytes is written with its header into the ring the receiver
//     registered (RDMA write with immediate on QP 0), right after the previous message; the receiver
//     matches it to a posted receive by tag, in order, and copies it out (or holds it until such a
//     receive is posted);
//   - a receive writes a clear-to-send at once for each of its buffers larger than eager_max, ahead of
//     any message (as NCCL's own transport does for every receive); a larger message that finds the one
//     for it there is RDMA-written straight into the receive buffer, split across the QPs, each QP's
//     part ending with an immediate that names the receive buffer;
//   - otherwise a larger message sends only its header (a request-to-send) the same way as a small
//     one; once matched, the receiver writes a clear-to-send for exactly that message into the
//     sender's mailbox, and the sender writes the data as above;
//   - the ring is allocated by bytes: a message takes its header and payload rounded to a cache line
//     (64 bytes for a request-to-send or a message of up to 32 bytes), so small messages do not each
//     hold eager_max bytes. The receiver returns ring space in batches by writing, into the sender's
//     credit word, the ring position up to which it has released every message.
// Messages of one tag are matched to receive buffers of that tag in posting order: the k-th send
// with tag T lands in the k-th buffer posted with tag T, which is also what the receiver-driven
// protocol (and NCCL's own) gives. Both ends count per tag, and every ring message and clear-to-send
// written ahead carries that ordinal, so the match does not depend on which way a message came.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>

#include "plugin/net/verbs/setup/handshake.h"
#include "railscope/nccl/net.h"

namespace railscope::net::verbs::eager {

inline constexpr int kRingMessages = 64;       // credits: ring messages in flight per connection
inline constexpr uint32_t kSignalEvery = 16;   // ring writes: one signalled completion per this many
inline constexpr size_t kMaxTargets = 32 * 8;  // receive buffers in flight (kFifoDepth x kMaxRecvs)
// Standing receives consumed by ring messages and data parts are given back in batches of this many
// (eager_queues.h sizes the pool of standing receives).
inline constexpr int kRepostBatch = 16;
// irecv gives them back once this many are due in all, off the path from an arrival to NCCL's reply:
// one ibv_post_recv's fixed cost (rxe: its lock and queue bookkeeping) shared by a batch rather than
// paid by every receive (bench/net_instructions). The completion path still gives a QP's back at
// kRepostBatch, so fewer than that stay consumed per QP whatever irecv does.
inline constexpr int kRepostFromIrecv = kRepostBatch / 2;

enum Kind : uint32_t { kData = 1, kRequestToSend = 2 };

// At the start of every ring message, written by the sender with the message.
struct Header {
  uint64_t seq;   // 1, 2, 3 ... per connection: which ring message this is
  uint32_t size;  // payload bytes (kData) or bytes to come (kRequestToSend; at most maxP2pBytes, 1 GiB)
  int32_t tag;
  uint32_t kind;     // Kind
  uint32_t req;      // request-to-send: the sender's mailbox entry the clear-to-send goes to (else 0)
  uint64_t ordinal;  // 1, 2, 3 ... per tag: the k-th send with this tag, for the k-th receive with it
};
static_assert(sizeof(Header) == 32);

// The devices an eager connection's ends may have: a clear-to-send holds one rkey per device of the
// receiver in its 64 bytes. An end with more (a virtual NIC of 5 to 8 ports) offers no eager path,
// and its connections use the receiver-driven protocol, whose clear-to-send holds 8.
inline constexpr int kMaxDevs = 4;
static_assert(kMaxDevs <= kMaxDevsPerEnd);

// Written by the receiver into the sender's region: into mailbox entry `req` when a request-to-send is
// matched, or, ahead of any message, into an entry ahead (below).
struct alignas(64) ClearToSend {
  uint64_t addr;  // receive buffer
  uint64_t size;  // its capacity
  uint32_t rkey[kMaxDevs];
  uint32_t target;   // what the data's immediate must name (receive slot x 8 + buffer)
  uint32_t status;   // kAccept, or kTooSmall when the buffer cannot hold the message
  uint64_t ordinal;  // ahead: the receive's ordinal for its tag (the send it is for); else 0
  int32_t tag;       // ahead: the receive's tag; else 0
  uint32_t reserved;
  // The request-to-send's Header::seq, or ahead the receive's (last written: marks the entry complete).
  uint64_t seq;
};
static_assert(sizeof(ClearToSend) == 64);
enum Status : uint32_t { kAccept = 0, kTooSmall = 1 };

// The region an eager sender registers for the receiver to write into, and nothing else (no
// receiver-driven FIFO: send_comm.h): [mailbox: ClearToSend x kMailboxEntries][credit word][ahead:
// ClearToSend x kAheadEntries]. One mailbox entry per large message in flight (NCCL keeps at most
// NCCL_NET_MAX_REQUESTS requests in flight per comm; eager_queues.h), as many entries ahead.
inline constexpr size_t kMailboxEntries = NCCL_NET_MAX_REQUESTS;
inline constexpr size_t kMailboxOffset = 0;
inline constexpr size_t kMailboxBytes = sizeof(ClearToSend) * kMailboxEntries;
inline constexpr size_t kCreditWordOffset = kMailboxOffset + kMailboxBytes;
inline constexpr size_t kCreditWordBytes = 64;
// Clear-to-sends written ahead: a receive writes one at once for each of its buffers larger than the eager
// limit (a grouped receive, up to kMaxRecvs of them), each into an entry the receiver holds free
// (AheadEntries), so a large send that finds its own there writes its data without a request-to-send
// (NCCL's own transport does this for every receive). The sender looks for its send's tag and ordinal in
// every entry. A buffer satisfied otherwise (a small message, or a request-to-send that came first)
// leaves its entry unused; the ordinal says which send an entry is for, so such an entry never matches
// another send. An entry is held while the clear-to-send in it waits for its data, and each of those
// counts among the large messages coming (eager_queues.h kMaxLargeInFlight), so the receiver never
// needs more entries than that.
inline constexpr size_t kAheadEntries = NCCL_NET_MAX_REQUESTS;
inline constexpr size_t kAheadOffset = kCreditWordOffset + kCreditWordBytes;
inline constexpr size_t kSenderRegionBytes = kAheadOffset + sizeof(ClearToSend) * kAheadEntries;

// The receiver's record of the entries ahead: which are free. An entry is taken for a clear-to-send written
// into it and given back once the send it is for took it (its data's first part arrived) or can no longer
// take it (its buffer got a ring message instead); the sender copies an entry once, so the receiver may
// rewrite it from then on. The next entry taken is the first free one from the entry after the last
// taken, so entries are written in turn, and a sender that looks from the entry after the one it used
// last finds each at its first look (EagerSend::take_ahead).
class AheadEntries {
 public:
  static_assert(kAheadEntries == 32, "one bit per entry in a 32-bit word");
  std::optional<uint32_t> take() {
    if (free_ == 0) return std::nullopt;
    const auto e = static_cast<uint32_t>(
        (next_ + std::countr_zero(std::rotr(free_, static_cast<int>(next_)))) % kAheadEntries);
    free_ &= ~(uint32_t{1} << e);
    next_ = (e + 1) % kAheadEntries;
    return e;
  }
  void give_back(uint32_t e) { free_ |= uint32_t{1} << (e % kAheadEntries); }

 private:
  uint32_t free_ = ~uint32_t{0};
  uint32_t next_ = 0;  // where the next look for a free entry starts
};

// Bytes a ring message takes: header and payload, rounded to a cache line.
inline constexpr size_t message_stride(uint64_t payload) { return (sizeof(Header) + payload + 63) / 64 * 64; }
// The largest: a message of eager_max bytes.
inline constexpr size_t max_stride(uint32_t eager_max) { return message_stride(eager_max); }

// The ring: at least 32 KiB, and at least four of the largest messages, in whole pages. With the
// default limit (4096 B) that is 32 KiB at each end where 64 fixed slots of eager_max took 260 KiB.
inline constexpr size_t kMinRingBytes = 32 * 1024;
inline constexpr size_t ring_bytes(uint32_t eager_max) {
  const size_t want = std::max(kMinRingBytes, 4 * max_stride(eager_max));
  return (want + 4095) / 4096 * 4096;
}

// Ring positions count bytes since the connection opened and never wrap; a message at position p
// lies at offset p % ring. Each message starts where the previous one ended or, when it would cross
// the ring's end, at the ring's start (the tail stays unused until the next round).
struct RingPlace {
  uint64_t start = 0;
  uint64_t end = 0;
  constexpr size_t offset(size_t ring) const { return static_cast<size_t>(start % ring); }
};
inline constexpr RingPlace place_after(uint64_t end_of_previous, size_t stride, size_t ring) {
  const uint64_t off = end_of_previous % ring;
  const uint64_t start = off + stride > ring ? end_of_previous + (ring - off) : end_of_previous;
  return RingPlace{start, start + stride};
}

// Sends (at the sender) or receive buffers (at the receiver) posted so far per tag: the k-th send with a
// tag is for the k-th buffer posted with it. NCCL uses a few tags per comm, so the map stays small and
// the last tag's count, cached (an element's address survives a rehash), serves most calls.
class TagCounts {
 public:
  uint64_t& of(int tag) {
    if (last_ != nullptr && tag == last_tag_) [[likely]]
      return *last_;
    last_ = &counts_[tag];
    last_tag_ = tag;
    return *last_;
  }

 private:
  std::unordered_map<int, uint64_t> counts_;
  int last_tag_ = 0;
  uint64_t* last_ = nullptr;
};

// Immediate data: ring messages carry their offset in the ring in cache lines; data parts of a large
// message carry the flag and the receive target.
inline constexpr uint32_t kImmData = 0x80000000u;
inline constexpr uint32_t imm_ring(const RingPlace& p, size_t ring) {
  return static_cast<uint32_t>(p.offset(ring) / 64);
}
inline constexpr uint32_t imm_target(uint32_t target) { return kImmData | target; }

// check_header's precondition: a ring of `ring_size` bytes the receiver allocated for its limit, and a
// message number.
inline bool own_ring(size_t ring_size, uint64_t seq, uint32_t eager_max) {
  return seq > 0 && eager_max <= kMaxEagerBytes && ring_size == ring_bytes(eager_max);
}
// Whether a header copy is message `seq` as the protocol allows it.
inline bool header_allowed(const Header& h, uint64_t seq, uint32_t eager_max) {
  const bool data = h.kind == kData, rts = h.kind == kRequestToSend;
  return h.seq == seq && (data || rts) && !(data && h.size > eager_max) && !(rts && h.size <= eager_max) &&
         h.req < kMailboxEntries && h.ordinal != 0;
}
// Where the sender had to put the message a header allowed above describes: right after the previous
// message, or at the ring's start.
inline RingPlace due_place(const Header& h, uint64_t end_of_previous, size_t ring_size) {
  return place_after(end_of_previous, message_stride(h.kind == kData ? h.size : 0), ring_size);
}

// The peer RDMA-writes the ring whenever it likes, also after a message was checked and while it is
// held for a receive not yet posted. So the receiver copies a message's header out of the ring once,
// on arrival, checks the copy and from then on uses only the copy: the payload copied out later is
// bounded by the copied size, which keeps it inside the message's place whatever the ring holds by then.
// `ring` is the whole registered ring (ring_bytes(eager_max)); message `seq` arrived with immediate
// `imm`, and the message before it ended at ring position `end_of_previous`. True when *copy is message
// `seq` as the protocol allows it (kind, size against eager_max, request index in range) and lies where
// the sender must have put it (*place). Without the reason, for the receiver's path of every message;
// header_refusal says why it refused. What the receiver itself sets is its precondition, not
// checked here (take_header checks it first): seq > 0, eager_max <= kMaxEagerBytes, and `ring` is the
// ring it allocated, ring_bytes(eager_max) bytes.
inline bool check_header(std::span<const std::byte> ring, uint64_t seq, uint64_t end_of_previous,
                         uint32_t imm, uint32_t eager_max, Header* copy, RingPlace* place) {
  const size_t offset = static_cast<size_t>(imm) * 64;
  if (offset > ring.size() - sizeof(Header)) return false;
  std::memcpy(copy, ring.data() + offset, sizeof *copy);  // the one read of the header
  if (!header_allowed(*copy, seq, eager_max)) return false;
  const RingPlace p = due_place(*copy, end_of_previous, ring.size());
  if (p.offset(ring.size()) != offset) return false;
  *place = p;
  return true;
}
// Why check_header refused message `seq` with these arguments; `copy` is the header it copied, read
// only where check_header got as far as copying it (only a failing connection asks).
std::string header_refusal(size_t ring_size, uint64_t seq, uint64_t end_of_previous, uint32_t imm,
                           uint32_t eager_max, const Header& copy);
// check_header returning the copy, or nullopt and *why.
std::optional<Header> take_header(std::span<const std::byte> ring, uint64_t seq, uint64_t end_of_previous,
                                  uint32_t imm, uint32_t eager_max, RingPlace* place, std::string* why);
// The payload bytes of the message at `place` whose checked header copy says `size` (<= eager_max).
inline std::span<const std::byte> payload(std::span<const std::byte> ring, const RingPlace& place,
                                          uint32_t eager_max, const Header& checked) {
  const size_t at = ring.empty() ? 0 : place.offset(ring.size()) + sizeof(Header);
  if (at >= ring.size()) return {};
  const size_t n = checked.kind == kData && checked.size <= eager_max ? static_cast<size_t>(checked.size) : 0;
  return ring.subspan(at, std::min(n, ring.size() - at));
}

// n bytes (sizeof(Word) <= n <= 2 * sizeof(Word)) as two Word moves, overlapping when n is not their sum.
template <class Word>
inline void copy_by_ends(std::byte* d, const std::byte* s, size_t n) {
  Word head, tail;
  std::memcpy(&head, s, sizeof head);
  std::memcpy(&tail, s + n - sizeof tail, sizeof tail);
  std::memcpy(d, &head, sizeof head);
  std::memcpy(d + n - sizeof tail, &tail, sizeof tail);
}

// A payload's copy into or out of the ring: up to 16 bytes in a few moves, more through memcpy, so that
// NCCL's smallest messages (LL flags, 8-byte steps) cost no library call on either end.
inline void copy_payload(void* dst, const void* src, size_t n) {
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  if (n > 16)
    std::memcpy(d, s, n);
  else if (n >= 8)
    copy_by_ends<uint64_t>(d, s, n);
  else if (n >= 4)
    copy_by_ends<uint32_t>(d, s, n);
  else
    for (size_t i = 0; i < n; ++i) d[i] = s[i];
}

// Which ring writes the sender signals (the others complete silently): one in kSignalEvery, and each
// that ends in another quarter of the ring than the message before it. A sender out of room waits for
// more than half the ring's bytes to complete here (the largest message and the tail it may skip are
// at most half the ring), and those bytes then always include a signalled write whose completion
// retires them.
inline constexpr bool ring_write_signalled(uint64_t seq, const RingPlace& p, uint64_t end_of_previous,
                                           size_t ring) {
  return seq % kSignalEvery == 0 || p.end / (ring / 4) != end_of_previous / (ring / 4);
}

// The sender's view of the ring: where each message in flight ends, how many the receiver released
// (its credit word holds the ring position up to which it released every message) and how many
// completed here (their staging bytes may be written again).
class SenderRing {
 public:
  explicit SenderRing(size_t ring = 0) : ring_(ring) {}
  size_t size() const { return ring_; }
  uint64_t posted() const { return posted_; }
  uint64_t released() const { return released_; }
  // Where message `seq` (0 <= posted - seq < kRingMessages) ends; 0 before the first.
  uint64_t end_of(uint64_t seq) const { return seq == 0 ? 0 : ends_[(seq - 1) % kRingMessages]; }
  uint64_t end() const { return end_; }  // where the last message posted ends
  // The receiver's credit word: counts the messages it wholly covers. False when it claims more than
  // was posted (a receiver that is not following the protocol).
  bool credit(uint64_t released_position) {
    if (released_position == credit_) return true;  // as last read: nothing new (most calls)
    if (released_position > end_) return false;
    credit_ = released_position;
    while (released_ < posted_ && end_of(released_ + 1) <= released_position) ++released_;
    return true;
  }
  // Where the next message of `stride` bytes goes, when neither the receiver (released) nor this
  // end's staging (`retired` messages completed here) still holds the bytes or the credit it needs.
  std::optional<RingPlace> reserve(size_t stride, uint64_t retired) const {
    if (posted_ - released_ >= kRingMessages || posted_ - retired >= kRingMessages) return std::nullopt;
    const RingPlace p = place_after(end_, stride, ring_);
    if (p.end - end_of(released_) > ring_ || p.end - end_of(std::min(retired, posted_)) > ring_)
      return std::nullopt;
    return p;
  }
  void post(const RingPlace& p) {
    ends_[posted_++ % kRingMessages] = p.end;
    end_ = p.end;
  }

 private:
  size_t ring_;
  uint64_t posted_ = 0;
  uint64_t end_ = 0;
  uint64_t released_ = 0;
  uint64_t credit_ = 0;  // the credit word as last read
  uint64_t ends_[kRingMessages] = {};
};

// Ring messages are released out of order (a message no receive has been posted for is held while later
// ones are copied out); the sender may reuse their bytes only once every message before them was released
// too. Tracks the released prefix.
class ReleasedPrefix {
 public:
  void release(uint64_t seq) { released_[(seq - 1) % kRingMessages] = true; }
  // Advances over released slots; returns the count of leading messages fully released.
  uint64_t advance() {
    while (released_[prefix_ % kRingMessages]) {
      released_[prefix_ % kRingMessages] = false;
      ++prefix_;
    }
    return prefix_;
  }
  uint64_t prefix() const { return prefix_; }

 private:
  bool released_[kRingMessages] = {};
  uint64_t prefix_ = 0;
};

// Messages and ring bytes (positions) counted together.
struct RingCount {
  uint64_t messages = 0;
  uint64_t position = 0;
};
// Whether the receiver should write its released position back now: in batches of half the credits,
// or at once when there is news and the sender may be about to wait: three quarters of the credits
// unreturned, or half the ring's bytes (the largest message and the tail it may skip are at most half
// the ring, ring_bytes(), so a sender out of room always finds the receiver past this mark).
inline constexpr bool credits_due(const RingCount& released, const RingCount& arrived,
                                  const RingCount& returned, size_t ring) {
  if (released.messages <= returned.messages) return false;
  return released.messages - returned.messages >= kRingMessages / 2 ||
         arrived.messages - returned.messages >= kRingMessages * 3 / 4 ||
         arrived.position - returned.position >= ring / 2;
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
