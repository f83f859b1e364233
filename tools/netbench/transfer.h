// SPDX-License-Identifier: Apache-2.0
// The measured loops, in NCCL's calling pattern: buffers registered once, isend/irecv posted while a
// window of requests is in flight, `*request == NULL` retried, completion found by polling test.
// Bandwidth: the client streams to the server. Latency: ping-pong, one message each way.
#pragma once

#include <cstdint>
#include <vector>

#include "payload.h"
#include "protocol.h"
#include "session.h"

namespace railscope::netbench {

struct SendResult {
  uint64_t elapsed_ns = 0;  // from the warmup-th completion to the last
  uint64_t timed_bytes = 0;
};

// Per size: how many slots each region holds and how the patterns rotate.
struct SlotLayout {
  uint32_t recv_slots = 1;  // window * recvs
  uint32_t send_slots = 2;  // recv_slots + 1: consecutive messages in one receive buffer differ
};
SlotLayout slot_layout(const SizePlan& plan);

// Bandwidth phase.
// The send slots hold their patterns already (prepare_slots); only sequence numbers are stamped.
SendResult send_stream(Session& s, const SizePlan& plan, bool verify);
PhaseResult receive_stream(Session& s, const SizePlan& plan, const Payload& payload, bool verify);

// Latency phase: the client measures each round trip; the server echoes.
std::vector<double> ping(Session& s, const SizePlan& plan, const Payload& payload, bool verify,
                         PhaseResult* reply_check);
PhaseResult pong(Session& s, const SizePlan& plan, const Payload& payload, bool verify);

// Prepares the send region for a size (patterns filled) and poisons the receive region.
void prepare_slots(Session& s, const SizePlan& plan, const Payload& payload, uint32_t send_slots,
                   uint32_t recv_slots);

}  // namespace railscope::netbench
