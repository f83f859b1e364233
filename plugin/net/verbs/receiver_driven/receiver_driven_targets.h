// SPDX-License-Identifier: Apache-2.0
// What the receiver-driven sender keeps of a matched clear-to-send slot (receiver_driven.h), and the
// sizes record one QP writes for it (receiver_driven_writes.h builds the writes from both).
#pragma once

#include <cstdint>

#include "plugin/net/verbs/setup/wire_limits.h"

namespace railscope::net::verbs {

inline constexpr uint32_t kSizesInArea = 0x80000000u;  // immediate flag: sizes are in the sizes area

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
