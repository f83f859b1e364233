// SPDX-License-Identifier: Apache-2.0
// What the sending end sends again after a failover (docs/failover.md): from its own record of the
// large messages it holds and the receiver's HELD notice, the parts that did not arrive, each assigned
// to a live QP in turn. The sender asks for HELD only once every part it posted completed locally
// (acknowledged, or flushed on a stopped QP), so a part HELD lacks is on no wire: it goes again
// whichever QP carried it, which keeps a second or third failover of a connection as simple as the
// first. The receiver's notice is trusted only about the receiver itself: a target or seq the sender
// has no message for is ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "plugin/net/verbs/failover/failover_message.h"

namespace railscope::net::verbs::failover {

// A large message the sender has in flight: its data parts (one per QP, chunk_of) not all completed.
struct InFlight {
  uint16_t target = 0;
  uint32_t seq = 0;  // low 32 bits of the clear-to-send's seq
  size_t nparts = 0;
};

struct Replay {
  uint16_t target = 0;
  uint8_t part = 0;   // the QP that first carried it: its chunk
  uint8_t on_qp = 0;  // the live QP it goes on now
  bool operator==(const Replay&) const = default;
};

// The first QP not in `failed` (the QP that now carries the eager ring); `nqps` when none is left.
size_t ring_qp(uint64_t failed, size_t nqps);

// The parts to send again: for each message in flight that the receiver still awaits under the same
// seq, the parts the receiver does not hold, round robin over the QPs not in `failed`; each part once,
// however often the list names the message. Empty when no QP is left.
std::vector<Replay> plan_replays(std::span<const InFlight> in_flight, const Notice& held, uint64_t failed,
                                 size_t nqps);

}  // namespace railscope::net::verbs::failover
