// The eager ring's checks (eager.h): a ring message's header is copied out once and checked.
#include "plugin/net/verbs/eager.h"

#include <fmt/format.h>

#include <cstring>

namespace railscope::net::verbs::eager {

std::optional<Header> take_header(std::span<const std::byte> ring, uint64_t seq, uint32_t eager_max,
                                  std::string* why) {
  if (seq == 0 || eager_max > kMaxEagerBytes || ring.size() < ring_bytes(eager_max)) {
    *why = fmt::format("ring of {} bytes cannot hold message {} with eager limit {}", ring.size(), seq,
                       eager_max);
    return std::nullopt;
  }
  Header h{};
  std::memcpy(&h, ring.data() + slot_offset(seq, eager_max), sizeof h);  // the one read of the header
  const bool data = h.kind == kData, rts = h.kind == kRequestToSend;
  if (h.seq != seq || (!data && !rts) || (data && h.size > eager_max) || (rts && h.size <= eager_max) ||
      h.req >= kMaxTargets) {
    *why = fmt::format("malformed ring message (seq {} of {} expected, kind {}, {} bytes, request {})", h.seq,
                       seq, h.kind, h.size, h.req);
    return std::nullopt;
  }
  return h;
}

std::span<const std::byte> payload(std::span<const std::byte> ring, uint64_t seq, uint32_t eager_max,
                                   const Header& checked) {
  const size_t n = checked.kind == kData && checked.size <= eager_max ? static_cast<size_t>(checked.size) : 0;
  return ring.subspan(slot_offset(seq, eager_max) + sizeof(Header), n);
}

}  // namespace railscope::net::verbs::eager
