// Fuzzes the verbs engine's eager ring header handling (plugin/net/verbs/eager.h, docs/net-protocol.md):
// the peer RDMA-writes the receiver's ring whenever it likes, so take_header() copies a message's
// header once and checks the copy, and payload() bounds the bytes copied out by that checked copy.
//
// Input: a control byte, the eager limit (u16, or u32 when the control byte's bit 0 is set, to reach
// limits above kMaxEagerBytes), seq (u64), the ring size relative to ring_bytes() (i8, in cache
// lines), the 32 header bytes for the slot of `seq`, then bytes scattered over the rest of the ring;
// bit 1 also rewrites the header after the check, as a hostile peer may.
// Properties: a ring too small for the limit, seq 0 or a limit above kMaxEagerBytes is refused; an
// accepted header is the slot's bytes at the time of the check, for message `seq`, of a known kind,
// data no larger than the limit, a request-to-send larger than it, its request index < kMaxTargets;
// payload() stays inside the message's slot (for any header, checked or not) and inside the ring
// (the ring is an allocation of exactly its size, so AddressSanitizer sees any overread); a refusal
// says why.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "plugin/net/verbs/eager.h"
#include "tests/fuzz/fuzz_check.h"

namespace re = railscope::net::verbs::eager;
using railscope::fuzz::Input;

namespace {

// Reads every byte of the span (so an out-of-bounds span faults under ASan) and checks its place.
void check_payload(std::span<const std::byte> ring, uint64_t seq, uint32_t eager_max, const re::Header& h) {
  const std::span<const std::byte> p = re::payload(ring, seq, eager_max, h);
  const size_t slot = re::slot_offset(seq, eager_max);
  const size_t off = static_cast<size_t>(p.data() - ring.data());
  RS_FUZZ_CHECK(p.empty() || (off == slot + sizeof(re::Header) && off + p.size() <= ring.size()),
                "payload at %zu+%zu, slot at %zu, ring of %zu", off, p.size(), slot, ring.size());
  RS_FUZZ_CHECK(sizeof(re::Header) + p.size() <= re::slot_stride(eager_max),
                "payload of %zu bytes in a slot of %zu", p.size(), re::slot_stride(eager_max));
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
  const auto lines = static_cast<int8_t>(in.u8());
  // A ring for a limit above the protocol's is never allocated (take_header must refuse it first).
  const uint32_t sized_for = eager_max <= railscope::net::verbs::kMaxEagerBytes ? eager_max : 0;
  const long want = static_cast<long>(re::ring_bytes(sized_for)) + 64L * lines;
  std::vector<std::byte> ring(want > 0 ? static_cast<size_t>(want) : 0);

  const std::vector<std::byte> header = in.bytes(sizeof(re::Header));
  const size_t slot = re::slot_offset(seq == 0 ? 1 : seq, sized_for);
  if (slot + header.size() <= ring.size() && !header.empty())
    std::memcpy(ring.data() + slot, header.data(), header.size());
  // The rest of the input: (u16 offset in cache lines, 8 bytes) pairs written anywhere in the ring.
  while (in.remaining() >= 10 && !ring.empty()) {
    const size_t at = static_cast<size_t>(in.le(2)) * 64 % ring.size();
    const std::vector<std::byte> b = in.bytes(8);
    std::memcpy(ring.data() + at, b.data(), std::min(b.size(), ring.size() - at));
  }

  std::string why;
  const auto h = re::take_header(ring, seq, eager_max, &why);
  const bool must_refuse = seq == 0 || eager_max > railscope::net::verbs::kMaxEagerBytes ||
                           ring.size() < re::ring_bytes(eager_max);
  if (!h) {
    RS_FUZZ_CHECK(!why.empty(), "a refused ring message must say why");
    if (!must_refuse) {
      // A refusal of a ring that fits: the header in the slot must break a rule.
      re::Header raw{};
      std::memcpy(&raw, ring.data() + re::slot_offset(seq, eager_max), sizeof raw);
      const bool ok_kind = (raw.kind == re::kData && raw.size <= eager_max) ||
                           (raw.kind == re::kRequestToSend && raw.size > eager_max);
      RS_FUZZ_CHECK(!(raw.seq == seq && ok_kind && raw.req < re::kMaxTargets),
                    "a valid header was refused: %s", why.c_str());
      check_payload(ring, seq, eager_max, raw);  // payload() on an unchecked header stays in its slot
    }
    return 0;
  }
  RS_FUZZ_CHECK(!must_refuse, "accepted seq %llu, limit %u, ring of %zu bytes",
                static_cast<unsigned long long>(seq), eager_max, ring.size());
  RS_FUZZ_CHECK(std::memcmp(&*h, ring.data() + re::slot_offset(seq, eager_max), sizeof(re::Header)) == 0,
                "the checked copy differs from the slot's header");
  RS_FUZZ_CHECK(h->seq == seq, "header of message %llu accepted as %llu",
                static_cast<unsigned long long>(h->seq), static_cast<unsigned long long>(seq));
  RS_FUZZ_CHECK(h->req < re::kMaxTargets, "request index %u", h->req);
  RS_FUZZ_CHECK((h->kind == re::kData && h->size <= eager_max) ||
                    (h->kind == re::kRequestToSend && h->size > eager_max),
                "kind %u with %llu bytes, limit %u", h->kind, static_cast<unsigned long long>(h->size),
                eager_max);
  if (control & 2) {  // the peer rewrites the slot after the check: only the copy counts
    std::memset(ring.data() + re::slot_offset(seq, eager_max), 0xff, sizeof(re::Header));
  }
  check_payload(ring, seq, eager_max, *h);
  if (h->kind == re::kData)
    RS_FUZZ_CHECK(re::payload(ring, seq, eager_max, *h).size() == h->size,
                  "payload shorter than the message");
  return 0;
}
