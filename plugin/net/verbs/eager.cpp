// The eager ring's checks (eager.h): a ring message's header is copied out once and checked, and it
// must lie where the sender had to put it.
#include "plugin/net/verbs/eager.h"

#include <fmt/format.h>

#include <cstring>

namespace railscope::net::verbs::eager {

std::optional<Header> take_header(std::span<const std::byte> ring, uint64_t seq, uint64_t end_of_previous,
                                  uint32_t imm, uint32_t eager_max, RingPlace* place, std::string* why) {
  if (seq == 0 || eager_max > kMaxEagerBytes || ring.size() != ring_bytes(eager_max)) {
    *why = fmt::format("ring of {} bytes cannot hold message {} with eager limit {}", ring.size(), seq,
                       eager_max);
    return std::nullopt;
  }
  const size_t offset = static_cast<size_t>(imm) * 64;
  if (offset > ring.size() - sizeof(Header)) {
    *why = fmt::format("ring message {} at offset {} of a {}-byte ring", seq, offset, ring.size());
    return std::nullopt;
  }
  Header h{};
  std::memcpy(&h, ring.data() + offset, sizeof h);  // the one read of the header
  const bool data = h.kind == kData, rts = h.kind == kRequestToSend;
  if (h.seq != seq || (!data && !rts) || (data && h.size > eager_max) || (rts && h.size <= eager_max) ||
      h.req >= kMailboxEntries || h.ordinal == 0) {
    *why = fmt::format(
        "malformed ring message (seq {} of {} expected, kind {}, {} bytes, request {}, ordinal {})", h.seq,
        seq, h.kind, h.size, h.req, h.ordinal);
    return std::nullopt;
  }
  // Where the sender had to put it: right after the previous message, or at the ring's start.
  const RingPlace p = place_after(end_of_previous, message_stride(data ? h.size : 0), ring.size());
  if (p.offset(ring.size()) != offset) {
    *why = fmt::format("ring message {} at offset {} where offset {} was due", seq, offset,
                       p.offset(ring.size()));
    return std::nullopt;
  }
  *place = p;
  return h;
}

std::span<const std::byte> payload(std::span<const std::byte> ring, const RingPlace& place,
                                   uint32_t eager_max, const Header& checked) {
  const size_t at = ring.empty() ? 0 : place.offset(ring.size()) + sizeof(Header);
  if (at >= ring.size()) return {};
  const size_t n = checked.kind == kData && checked.size <= eager_max ? static_cast<size_t>(checked.size) : 0;
  return ring.subspan(at, std::min(n, ring.size() - at));
}

}  // namespace railscope::net::verbs::eager
