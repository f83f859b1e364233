// SPDX-License-Identifier: Apache-2.0
// The receiving end's record, during and after a failover, of which parts of each large message's data
// arrived (docs/failover.md). Before a failover a part is known by the QP it arrives on; a part sent again
// on another QP names its part in its immediate (replay_immediate). Each part is taken at most once: a
// second copy, a part the message does not have, or a part for a message not awaited is refused, so a
// confused or hostile sender cannot make the receiver count data twice or complete a message early.
// Bounded: one entry per receive target (kMaxHeld), no allocation after construction.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "plugin/net/verbs/failover/failover_message.h"

namespace railscope::net::verbs::failover {

// A data part's immediate (eager.h: kImmData | target) sent again after a failover: bit 30 marks it,
// bits 16..21 name the part (the QP that first carried it). Targets stay below 2^16.
inline constexpr uint32_t kImmReplayed = 0x40000000u;
inline constexpr uint32_t replay_immediate(uint32_t data_bit, uint16_t target, uint8_t part) {
  return data_bit | kImmReplayed | (static_cast<uint32_t>(part & 63u) << 16) | target;
}
struct ReplayedPart {
  uint16_t target = 0;
  uint8_t part = 0;
};
// The target and part a replayed immediate names (data bit already removed); nullopt when it is not one,
// or when any bit outside the fields is set.
inline std::optional<ReplayedPart> replayed_part(uint32_t imm) {
  if ((imm & kImmReplayed) == 0 || (imm & ~(kImmReplayed | 0x003fffffu)) != 0) return std::nullopt;
  return ReplayedPart{static_cast<uint16_t>(imm & 0xffffu), static_cast<uint8_t>((imm >> 16) & 63u)};
}

// The receiver's data path keeps, per receive target, one bit per part taken (`*have`): part `part` of
// a message of `nparts` parts is taken when it is one of them and not taken yet. False: a copy, or no
// part of this message; *have unchanged.
inline bool take_part(uint64_t* have, uint64_t part, size_t nparts) {
  const uint64_t bit = uint64_t{1} << (part & 63);
  if (part >= nparts || part >= kMaxQps || (*have & bit) != 0) return false;
  *have |= bit;
  return true;
}

enum class Arrival : uint8_t { Taken, Complete, Refused };

class PartLedger {
 public:
  // A large message for `target` (clear-to-send seq `seq`) of `nparts` parts (1..kMaxQps) is awaited.
  // False when the target is out of range or still awaits another message.
  bool expect(uint16_t target, uint32_t seq, size_t nparts) {
    if (target >= kMaxHeld || nparts == 0 || nparts > kMaxQps || entries_[target].want != 0) return false;
    entries_[target] = Entry{seq, nparts == 64 ? ~uint64_t{0} : (uint64_t{1} << nparts) - 1, 0};
    return true;
  }
  // Part `part` of target's message arrived. Complete: it was the last; the target is free again.
  Arrival arrive(uint16_t target, size_t part) {
    if (target >= kMaxHeld || part >= kMaxQps) return Arrival::Refused;
    Entry& e = entries_[target];
    // want is the first nparts bits (expect): the data path's rule, on the ledger's record.
    if (!take_part(&e.got, part, static_cast<size_t>(std::popcount(e.want)))) return Arrival::Refused;
    if (e.got != e.want) return Arrival::Taken;
    e = Entry{};
    return Arrival::Complete;
  }
  // The message of `target` ended another way (the connection closed it): forget it.
  void forget(uint16_t target) {
    if (target < kMaxHeld) entries_[target] = Entry{};
  }
  bool awaited(uint16_t target) const { return target < kMaxHeld && entries_[target].want != 0; }
  // What a HELD notice says: every awaited message, targets increasing.
  std::vector<PartsHeld> held() const {
    std::vector<PartsHeld> out;
    for (size_t t = 0; t < kMaxHeld; ++t)
      if (entries_[t].want != 0)
        out.push_back(PartsHeld{static_cast<uint16_t>(t), entries_[t].seq, entries_[t].got});
    return out;
  }

 private:
  struct Entry {
    uint32_t seq = 0;
    uint64_t want = 0;  // one bit per part; 0: nothing awaited
    uint64_t got = 0;
  };
  std::array<Entry, kMaxHeld> entries_{};
};

}  // namespace railscope::net::verbs::failover
