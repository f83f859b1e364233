// SPDX-License-Identifier: Apache-2.0
// Fuzzes the verbs engine's eager ring header handling (plugin/net/verbs/eager/eager.h,
// docs/net-protocol.md): the peer RDMA-writes the receiver's ring whenever it likes, so take_header() copies
// a message's header once and checks the copy and where it lies, and payload() bounds the bytes copied out by
// that checked copy.
//
// Input: a control byte, the eager limit (u16, or u32 when the control byte's bit 0 is set, to reach
// limits above kMaxEagerBytes), seq (u64), where the previous message ended (u32, a ring position),
// the immediate (u16: the offset in cache lines), the ring size relative to ring_bytes() (i8, in cache
// lines), the 32 header bytes at the immediate's offset, then bytes scattered over the rest of the
// ring; bit 1 also rewrites the header after the check, as a hostile peer may.
// Properties: a ring of another size than the limit's, seq 0 or a limit above kMaxEagerBytes is
// refused; an accepted header is the ring's bytes at the immediate's offset at the time of the check,
// for message `seq`, of a known kind, data no larger than the limit, a request-to-send larger than it,
// its mailbox entry < kMailboxEntries, and it lies where the sender had to put it (right after the
// previous message or at the ring's start, wholly inside the ring); payload() stays inside the
// message's place and inside the ring (the ring is an allocation of exactly its size, so
// AddressSanitizer sees any overread); a refusal says why.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "plugin/net/verbs/eager/eager.h"
#include "tests/fuzz/fuzz_check.h"

namespace re = railscope::net::verbs::eager;
using railscope::fuzz::Input;

namespace {

// Reads every byte of the span (so an out-of-bounds span faults under ASan) and checks its place.
void check_payload(std::span<const std::byte> ring, const re::RingPlace& place, uint32_t eager_max,
                   const re::Header& h) {
  const std::span<const std::byte> p = re::payload(ring, place, eager_max, h);
  if (ring.empty()) return;
  const size_t at = place.offset(ring.size());
  const size_t off = static_cast<size_t>(p.data() - ring.data());
  RS_FUZZ_CHECK(p.empty() || (off == at + sizeof(re::Header) && off + p.size() <= ring.size()),
                "payload at %zu+%zu, message at %zu, ring of %zu", off, p.size(), at, ring.size());
  RS_FUZZ_CHECK(p.size() <= eager_max, "payload of %zu bytes, limit %u", p.size(), eager_max);
  unsigned sum = 0;
  for (std::byte b : p) sum += static_cast<unsigned>(b);
  (void)sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  const uint8_t control = in.u8();
  const auto eager_max = static_cast<uint32_t>((control & 1) ? in.le(4) : in.le(2));
  const uint64_t seq = in.le(8);
  const uint64_t previous_end = in.le(4);
  const auto imm = static_cast<uint32_t>(in.le(2));
  const auto lines = static_cast<int8_t>(in.u8());
  // A ring for a limit above the protocol's is never allocated (take_header must refuse it first).
  const uint32_t sized_for = eager_max <= railscope::net::verbs::kMaxEagerBytes ? eager_max : 0;
  const long want = static_cast<long>(re::ring_bytes(sized_for)) + 64L * lines;
  std::vector<std::byte> ring(want > 0 ? static_cast<size_t>(want) : 0);

  const std::vector<std::byte> header = in.bytes(sizeof(re::Header));
  const size_t at = static_cast<size_t>(imm) * 64;
  if (at + header.size() <= ring.size() && !header.empty())
    std::memcpy(ring.data() + at, header.data(), header.size());
  // The rest of the input: (u16 offset in cache lines, 8 bytes) pairs written anywhere in the ring.
  while (in.remaining() >= 10 && !ring.empty()) {
    const size_t to = static_cast<size_t>(in.le(2)) * 64 % ring.size();
    const std::vector<std::byte> b = in.bytes(8);
    std::memcpy(ring.data() + to, b.data(), std::min(b.size(), ring.size() - to));
  }

  std::string why;
  re::RingPlace place;
  const auto h = re::take_header(ring, seq, previous_end, imm, eager_max, &place, &why);
  const bool must_refuse = seq == 0 || eager_max > railscope::net::verbs::kMaxEagerBytes ||
                           ring.size() != re::ring_bytes(eager_max);
  if (!h) {
    RS_FUZZ_CHECK(!why.empty(), "a refused ring message must say why");
    if (!must_refuse && at + sizeof(re::Header) <= ring.size()) {
      // A refusal of a ring that fits: the header at the offset must break a rule.
      re::Header raw{};
      std::memcpy(&raw, ring.data() + at, sizeof raw);
      const bool is_data = raw.kind == re::kData;
      const bool ok_kind =
          (is_data && raw.size <= eager_max) || (raw.kind == re::kRequestToSend && raw.size > eager_max);
      const re::RingPlace due =
          re::place_after(previous_end, re::message_stride(is_data && ok_kind ? raw.size : 0), ring.size());
      RS_FUZZ_CHECK(!(raw.seq == seq && ok_kind && raw.req < re::kMailboxEntries && raw.ordinal != 0 &&
                      due.offset(ring.size()) == at),
                    "a valid header was refused: %s", why.c_str());
      check_payload(ring, re::RingPlace{at, at + 64}, eager_max, raw);  // unchecked: still in the ring
    }
    return 0;
  }
  RS_FUZZ_CHECK(!must_refuse, "accepted seq %llu, limit %u, ring of %zu bytes",
                static_cast<unsigned long long>(seq), eager_max, ring.size());
  RS_FUZZ_CHECK(place.offset(ring.size()) == at, "accepted at offset %zu, the immediate says %zu",
                place.offset(ring.size()), at);
  RS_FUZZ_CHECK(std::memcmp(&*h, ring.data() + at, sizeof(re::Header)) == 0,
                "the checked copy differs from the ring's header");
  const size_t stride = re::message_stride(h->kind == re::kData ? h->size : 0);
  RS_FUZZ_CHECK(place.end - place.start == stride && at + stride <= ring.size(),
                "a message of %zu bytes placed at %zu in a ring of %zu", stride, at, ring.size());
  RS_FUZZ_CHECK(place.start == previous_end ||
                    (at == 0 && place.start > previous_end && place.start - previous_end < stride),
                "placed at position %llu after %llu", static_cast<unsigned long long>(place.start),
                static_cast<unsigned long long>(previous_end));
  RS_FUZZ_CHECK(h->seq == seq, "header of message %llu accepted as %llu",
                static_cast<unsigned long long>(h->seq), static_cast<unsigned long long>(seq));
  RS_FUZZ_CHECK(h->req < re::kMailboxEntries, "mailbox entry %u", h->req);
  RS_FUZZ_CHECK((h->kind == re::kData && h->size <= eager_max) ||
                    (h->kind == re::kRequestToSend && h->size > eager_max),
                "kind %u with %llu bytes, limit %u", h->kind, static_cast<unsigned long long>(h->size),
                eager_max);
  if (control & 2) {  // the peer rewrites the header after the check: only the copy counts
    std::memset(ring.data() + at, 0xff, sizeof(re::Header));
  }
  check_payload(ring, place, eager_max, *h);
  if (h->kind == re::kData)
    RS_FUZZ_CHECK(re::payload(ring, place, eager_max, *h).size() == h->size,
                  "payload shorter than the message");
  return 0;
}
