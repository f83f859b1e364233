// SPDX-License-Identifier: Apache-2.0
// The eager ring's checks beside the receiver's (eager.h check_header): why a ring
// message was refused, and the checks with their reason for the tests and the fuzzer.
#include "plugin/net/verbs/eager/eager.h"

#include <fmt/format.h>

namespace railscope::net::verbs::eager {

std::string header_refusal(size_t ring_size, uint64_t seq, uint64_t end_of_previous, uint32_t imm,
                           uint32_t eager_max, const Header& copy) {
  if (!own_ring(ring_size, seq, eager_max))
    return fmt::format("ring of {} bytes cannot hold message {} with eager limit {}", ring_size, seq,
                       eager_max);
  const size_t offset = static_cast<size_t>(imm) * 64;
  if (offset > ring_size - sizeof(Header))
    return fmt::format("ring message {} at offset {} of a {}-byte ring", seq, offset, ring_size);
  const Header& h = copy;
  if (!header_allowed(h, seq, eager_max))
    return fmt::format(
        "malformed ring message (seq {} of {} expected, kind {}, {} bytes, request {}, ordinal {})", h.seq,
        seq, h.kind, h.size, h.req, h.ordinal);
  const RingPlace p = due_place(h, end_of_previous, ring_size);
  return fmt::format("ring message {} at offset {} where offset {} was due", seq, offset,
                     p.offset(ring_size));
}

std::optional<Header> take_header(std::span<const std::byte> ring, uint64_t seq, uint64_t end_of_previous,
                                  uint32_t imm, uint32_t eager_max, RingPlace* place, std::string* why) {
  Header h{};
  if (own_ring(ring.size(), seq, eager_max) &&
      check_header(ring, seq, end_of_previous, imm, eager_max, &h, place))
    return h;
  *why = header_refusal(ring.size(), seq, end_of_previous, imm, eager_max, h);
  return std::nullopt;
}

}  // namespace railscope::net::verbs::eager
