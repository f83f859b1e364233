// SPDX-License-Identifier: Apache-2.0
// What the receiver-driven sender keeps of a matched clear-to-send slot (receiver_driven.h), and the
// sizes record one QP writes for it (receiver_driven_writes.h builds the writes from both).
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugin/net/verbs/setup/wire_limits.h"

namespace railscope::net::verbs {

inline constexpr uint32_t kSizesInArea = 0x80000000u;  // immediate flag: sizes are in the sizes area
// Failover (docs/failover.md): the immediate that ends the parts of a receive written again on QP 0 after
// its QPs failed, naming the receive slot. A size (31 bits) never has bit 31 set, and kSizesInArea has
// no other bit, so no immediate of the protocol's own is one.
inline constexpr uint32_t kReplayImm = 0xC0000000u;
inline constexpr uint32_t kReplayImmMask = 0xC0000000u;
inline constexpr bool is_replay_imm(uint32_t imm) { return (imm & kReplayImmMask) == kReplayImm; }
// A receive's standing receive on QP q names its slot and the QP (the receiver's HELD lists the QPs
// whose immediate arrived).
inline constexpr uint64_t recv_wr_low(size_t q, size_t slot) { return static_cast<uint64_t>(q) << 8 | slot; }
inline constexpr size_t recv_wr_slot(uint64_t low) { return static_cast<size_t>(low & 0xff); }
inline constexpr size_t recv_wr_qp(uint64_t low) { return static_cast<size_t>(low >> 8); }

// What the sender keeps of one clear-to-send entry, copied once from the FIFO: where the receive buffer
// is (its rkey per remote device), how large, its tag.
struct CtsTarget {
  uint64_t addr = 0;
  uint64_t size = 0;
  uint32_t rkey[kMaxDevsPerEnd]{};
  int32_t tag = 0;
};

// The slot's sizes record as one QP sees it (needs_sizes_record: several buffers, or a size the
// immediate cannot hold). QP 0 writes the record into the receiver's sizes area; every QP ends its part
// with a write with immediate kSizesInArea.
struct SizesWrite {
  bool in_area = false;
  uint64_t local = 0;  // the record (a SizesSlot) and its length
  uint32_t bytes = 0;
  uint32_t lkey = 0;       // of the record, on the QP's lane
  uint64_t remote = 0;     // the record's place in the receiver's sizes area
  uint64_t area = 0;       // the sizes area (what a zero-length write with immediate names)
  uint32_t area_rkey = 0;  // of the sizes area, on the QP's remote device
};

}  // namespace railscope::net::verbs
