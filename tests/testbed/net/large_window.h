// SPDX-License-Identifier: Apache-2.0
// More large sends than may be in flight on one eager connection, posted before their receives (as
// NCCL may post sends early): the engine takes NCCL_NET_MAX_REQUESTS of them, answers "call again"
// (request NULL, never an error) for the rest, and takes each of those once an earlier one is done, so
// its queues stay within the depths plugin/net/verbs/eager/eager_queues.h gives them. Every message, all
// with one tag, lands in the receive posted in the same place in order, whole.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "railscope/nccl/net.h"
#include "tests/testbed/net/window_delivery.h"

// sbuf/rbuf: at least kLargeWindowMessages x slice bytes, registered as smr/rmr; the caller filled
// sbuf. Message k is base + 512 k bytes (base above the eager limit, base + 512 x 39 <= slice).
inline constexpr size_t kLargeWindowMessages = NCCL_NET_MAX_REQUESTS + 8;

inline bool large_beyond_window(const ncclNet_v11_t* t, void* sc, void* rc, const uint8_t* sbuf,
                                uint8_t* rbuf, size_t slice, void* smr, void* rmr, size_t base,
                                std::string* why) {
  constexpr size_t n = kLargeWindowMessages;
  constexpr int kTag = 50;
  auto size_of = [&](size_t k) { return base + 512 * k; };
  std::vector<void*> sreq(n, nullptr), rreq(n, nullptr);
  auto isend = [&](size_t k) {
    return t->isend(sc, const_cast<uint8_t*>(sbuf) + k * slice, size_of(k), kTag, smr, nullptr, &sreq[k]);
  };
  size_t taken = 0;
  for (; taken < n; ++taken) {
    if (isend(taken) != ncclSuccess) return *why = "isend before its receive failed", false;
    if (sreq[taken] == nullptr) break;
  }
  if (taken != static_cast<size_t>(NCCL_NET_MAX_REQUESTS))
    return *why = std::to_string(taken) + " large sends taken before their receives, " +
                  std::to_string(NCCL_NET_MAX_REQUESTS) + " expected",
           false;
  // The receives, as far as the receive comm takes them (NCCL_NET_MAX_REQUESTS in flight, like the
  // sends); round robin posts the rest as earlier ones are done.
  auto irecv = [&](size_t k) {
    void* data = rbuf + k * slice;
    size_t size = slice;
    int tag = kTag;
    return t->irecv(rc, 1, &data, &size, &tag, &rmr, nullptr, &rreq[k]);
  };
  size_t received = 0;
  for (; received < n; ++received) {
    if (irecv(received) != ncclSuccess) return *why = "irecv failed", false;
    if (rreq[received] == nullptr) break;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  return round_robin_until_delivered(t, n, isend, irecv, taken, received, sreq, rreq, size_of, sbuf, rbuf,
                                     slice, deadline, why);
}
