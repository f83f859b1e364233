// SPDX-License-Identifier: Apache-2.0
// How the window cases (large_window.h, receive_window.h) finish: every request progressed until done,
// then what each message must have become.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "railscope/nccl/net.h"

template <class SizeOf>
inline bool delivered_in_order(size_t n, SizeOf size_of, const std::vector<int>& ssz,
                               const std::vector<int>& rsz, const uint8_t* sbuf, const uint8_t* rbuf,
                               size_t slice, std::string* why) {
  for (size_t k = 0; k < n; ++k) {
    const auto want = static_cast<int>(size_of(k));
    if (ssz[k] != want || rsz[k] != want)
      return *why = "message " + std::to_string(k) + ": sent " + std::to_string(ssz[k]) + ", received " +
                    std::to_string(rsz[k]) + " bytes, " + std::to_string(want) + " expected",
             false;
    if (std::memcmp(sbuf + k * slice, rbuf + k * slice, size_of(k)) != 0)
      return *why = "message " + std::to_string(k) + " payload differs", false;
  }
  return true;
}

// Round robin, as NCCL's proxy thread: the next send and the next receive not taken yet (the first
// `sent` and `received` of n were) are posted again, in order, while every request in flight is
// tested, until all 2n are done; then delivered_in_order.
template <class Isend, class Irecv, class SizeOf>
inline bool round_robin_until_delivered(const ncclNet_v11_t* t, size_t n, Isend isend, Irecv irecv,
                                        size_t sent, size_t received, const std::vector<void*>& sreq,
                                        const std::vector<void*>& rreq, SizeOf size_of, const uint8_t* sbuf,
                                        const uint8_t* rbuf, size_t slice,
                                        std::chrono::steady_clock::time_point deadline, std::string* why) {
  std::vector<int> ssz(n, -1), rsz(n, -1), sdone(n, 0), rdone(n, 0);
  for (size_t left = 2 * n; left > 0;) {
    if (sent < n) {
      if (isend(sent) != ncclSuccess) return *why = "isend failed", false;
      if (sreq[sent] != nullptr) ++sent;
    }
    if (received < n) {
      if (irecv(received) != ncclSuccess) return *why = "irecv failed", false;
      if (rreq[received] != nullptr) ++received;
    }
    for (size_t k = 0; k < n; ++k) {
      if (k < sent && !sdone[k]) {
        if (t->test(sreq[k], &sdone[k], &ssz[k]) != ncclSuccess) return *why = "test of a send failed", false;
        left -= static_cast<size_t>(sdone[k]);
      }
      if (k < received && !rdone[k]) {
        if (t->test(rreq[k], &rdone[k], &rsz[k]) != ncclSuccess)
          return *why = "test of a receive failed", false;
        left -= static_cast<size_t>(rdone[k]);
      }
    }
    if (left > 0 && std::chrono::steady_clock::now() > deadline)
      return *why = std::to_string(left) + " requests not done within 90 s", false;
  }
  return delivered_in_order(n, size_of, ssz, rsz, sbuf, rbuf, slice, why);
}
