// SPDX-License-Identifier: Apache-2.0
// More sends than the sender's request pool holds, on one receiver-driven connection whose receives are
// all posted first, 8 buffers to a request (NCCL's grouped receives): the clear-to-sends offer 256
// buffers, the sender takes kSendWindowPool sends, answers "call again" (request NULL, never an error)
// for the rest for as long as none of those is tested done, and takes each once an earlier one is.
// Message k (tag k mod 8) lands whole in buffer k mod 8 of receive k / 8.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "railscope/nccl/net.h"
#include "tests/testbed/net/window_delivery.h"

inline constexpr int kSendWindowGroup = 8;  // buffers per receive (NCCL_NET_IB_MAX_RECVS)
inline constexpr size_t kSendWindowReceives = NCCL_NET_MAX_REQUESTS;
inline constexpr size_t kSendWindowMessages = kSendWindowReceives * kSendWindowGroup;
inline constexpr size_t kSendWindowPool = 128;  // plugin/net/verbs/send_comm.h: kSendRequests

// sbuf/rbuf: at least kSendWindowMessages x slice bytes, registered as smr/rmr; the caller filled sbuf.
// Message k is 1 + 29 k bytes (slice >= 1 + 29 x 255).
inline bool sends_beyond_request_pool(const ncclNet_v11_t* t, void* sc, void* rc, const uint8_t* sbuf,
                                      uint8_t* rbuf, size_t slice, void* smr, void* rmr, std::string* why) {
  constexpr size_t n = kSendWindowMessages;
  constexpr size_t g = kSendWindowGroup;
  auto size_of = [](size_t k) { return 1 + 29 * k; };
  std::vector<void*> sreq(n, nullptr), rreq(kSendWindowReceives, nullptr);
  for (size_t r = 0; r < kSendWindowReceives; ++r) {
    void* data[g];
    size_t sizes[g];
    int tags[g];
    void* mrs[g];
    for (size_t i = 0; i < g; ++i) {
      data[i] = rbuf + (r * g + i) * slice;
      sizes[i] = slice;
      tags[i] = static_cast<int>(i);
      mrs[i] = rmr;
    }
    if (t->irecv(rc, static_cast<int>(g), data, sizes, tags, mrs, nullptr, &rreq[r]) != ncclSuccess)
      return *why = "irecv before any send failed", false;
    if (rreq[r] == nullptr) return *why = "receive " + std::to_string(r) + " of the window not taken", false;
  }
  auto isend = [&](size_t k) {
    return t->isend(sc, const_cast<uint8_t*>(sbuf) + k * slice, size_of(k), static_cast<int>(k % g), smr,
                    nullptr, &sreq[k]);
  };
  // No test() yet: nothing can hand a request back, so the sender stops at its pool. The clear-to-sends
  // arrive as the receiver's writes land: keep asking until none has been taken for 2 s.
  size_t sent = 0;
  auto last_taken = std::chrono::steady_clock::now();
  while (sent < n && std::chrono::steady_clock::now() - last_taken < std::chrono::seconds(2)) {
    if (isend(sent) != ncclSuccess) return *why = "isend before any test failed", false;
    if (sreq[sent] != nullptr) {
      ++sent;
      last_taken = std::chrono::steady_clock::now();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  if (sent != kSendWindowPool)
    return *why = std::to_string(sent) + " sends taken before any test, " + std::to_string(kSendWindowPool) +
                  " expected",
           false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  std::vector<int> ssz(n, -1), sdone(n, 0), rdone(kSendWindowReceives, 0);
  std::vector<int> rsz(n, -1);
  for (size_t left = n + kSendWindowReceives; left > 0;) {
    if (sent < n) {
      if (isend(sent) != ncclSuccess) return *why = "isend failed", false;
      if (sreq[sent] != nullptr) ++sent;
    }
    for (size_t k = 0; k < sent; ++k)
      if (!sdone[k]) {
        if (t->test(sreq[k], &sdone[k], &ssz[k]) != ncclSuccess) return *why = "test of a send failed", false;
        left -= static_cast<size_t>(sdone[k]);
      }
    for (size_t r = 0; r < kSendWindowReceives; ++r)
      if (!rdone[r]) {
        if (t->test(rreq[r], &rdone[r], &rsz[r * g]) != ncclSuccess)
          return *why = "test of a receive failed", false;
        left -= static_cast<size_t>(rdone[r]);
      }
    if (left > 0 && std::chrono::steady_clock::now() > deadline)
      return *why = std::to_string(left) + " requests not done within 90 s", false;
  }
  // Buffer i of receive r holds message r x 8 + i: rsz is in message order, as delivered_in_order wants.
  return delivered_in_order(n, size_of, ssz, rsz, sbuf, rbuf, slice, why);
}
