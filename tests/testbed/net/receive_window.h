// SPDX-License-Identifier: Apache-2.0
// More receives than may be in flight on one receiver-driven connection, posted before any send (as
// NCCL posts receives early): the engine takes NCCL_NET_MAX_REQUESTS of them (its clear-to-send FIFO
// has that many slots, plugin/net/verbs/receiver_driven/receiver_driven_queues.h), answers "call again"
// (request NULL, never an error) for the rest, and takes each of those once an earlier one is done, so its
// queues stay within their depths. Every message, all with one tag, lands in the receive posted in the same
// place in order, whole.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "railscope/nccl/net.h"
#include "tests/testbed/net/window_delivery.h"

inline constexpr size_t kReceiveWindowMessages = NCCL_NET_MAX_REQUESTS + 8;

// sbuf/rbuf: at least kReceiveWindowMessages x slice bytes, registered as smr/rmr; the caller filled
// sbuf. Message k is 1 + 1531 k bytes (slice >= 1 + 1531 x 39).
inline bool receives_beyond_window(const ncclNet_v11_t* t, void* sc, void* rc, const uint8_t* sbuf,
                                   uint8_t* rbuf, size_t slice, void* smr, void* rmr, std::string* why) {
  constexpr size_t n = kReceiveWindowMessages;
  constexpr int kTag = 60;
  auto size_of = [](size_t k) { return 1 + 1531 * k; };
  std::vector<void*> sreq(n, nullptr), rreq(n, nullptr);
  auto irecv = [&](size_t k) {
    void* data = rbuf + k * slice;
    size_t size = slice;
    int tag = kTag;
    return t->irecv(rc, 1, &data, &size, &tag, &rmr, nullptr, &rreq[k]);
  };
  auto isend = [&](size_t k) {
    return t->isend(sc, const_cast<uint8_t*>(sbuf) + k * slice, size_of(k), kTag, smr, nullptr, &sreq[k]);
  };
  size_t received = 0;  // receives taken
  for (; received < n; ++received) {
    if (irecv(received) != ncclSuccess) return *why = "irecv before any send failed", false;
    if (rreq[received] == nullptr) break;
  }
  if (received != static_cast<size_t>(NCCL_NET_MAX_REQUESTS))
    return *why = std::to_string(received) + " receives taken before any send, " +
                  std::to_string(NCCL_NET_MAX_REQUESTS) + " expected",
           false;
  for (int again = 0; again < 16; ++again)  // nothing was sent, so nothing can free a slot
    if (irecv(received) != ncclSuccess || rreq[received] != nullptr)
      return *why = "a receive beyond the window was taken (or failed) before any send", false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  return round_robin_until_delivered(t, n, isend, irecv, 0, received, sreq, rreq, size_of, sbuf, rbuf, slice,
                                     deadline, why);
}
