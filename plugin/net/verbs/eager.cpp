// The eager ring's checks out of the receiver's line (eager.h check_header is inline): why a ring
// message was refused, and the checks with their reason for the tests and the fuzzer.
#include "plugin/net/verbs/eager.h"

#include <fmt/format.h>

namespace railscope::net::verbs::eager {

std::string header_refusal(size_t ring_size, uint64_t seq, uint64_t end_of_previous, uint32_t imm,
                           uint32_t eager_max, const Header& copy) {
  if (seq == 0 || eager_max > kMaxEagerBytes || ring_size != ring_bytes(eager_max))
    return fmt::format("ring of {} bytes cannot hold message {} with eager limit {}", ring_size, seq,
                       eager_max);
  const size_t offset = static_cast<size_t>(imm) * 64;
  if (offset > ring_size - sizeof(Header))
    return fmt::format("ring message {} at offset {} of a {}-byte ring", seq, offset, ring_size);
  const Header& h = copy;
  const bool data = h.kind == kData, rts = h.kind == kRequestToSend;
  if (h.seq != seq || (!data && !rts) || (data && h.size > eager_max) || (rts && h.size <= eager_max) ||
      h.req >= kMailboxEntries || h.ordinal == 0)
    return fmt::format(
        "malformed ring message (seq {} of {} expected, kind {}, {} bytes, request {}, ordinal {})", h.seq,
        seq, h.kind, h.size, h.req, h.ordinal);
  const RingPlace p = place_after(end_of_previous, message_stride(data ? h.size : 0), ring_size);
  return fmt::format("ring message {} at offset {} where offset {} was due", seq, offset,
                     p.offset(ring_size));
}

std::optional<Header> take_header(std::span<const std::byte> ring, uint64_t seq, uint64_t end_of_previous,
                                  uint32_t imm, uint32_t eager_max, RingPlace* place, std::string* why) {
  Header h{};
  const bool own_ring = seq > 0 && eager_max <= kMaxEagerBytes && ring.size() == ring_bytes(eager_max);
  if (own_ring && check_header(ring, seq, end_of_previous, imm, eager_max, &h, place)) return h;
  *why = header_refusal(ring.size(), seq, end_of_previous, imm, eager_max, h);
  return std::nullopt;
}

}  // namespace railscope::net::verbs::eager
