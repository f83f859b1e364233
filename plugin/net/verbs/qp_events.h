// SPDX-License-Identifier: Apache-2.0
// The profiler's QP events of the messages in flight on one connection (docs/fabric-health-net.md,
// "To the profiler"): one event per part of a message, each naming the QP that carries the part and
// the QP's local device, as NCCL's IB transport starts one QP event per QP it posts a request on
// (net_ib.cc, NCCL_ENABLE_NET_PROFILING). Part q of a message goes through QP q (chunk_of, send_comm.h).
// Handles are kept per (request slot, QP), allocated with the first event: a connection whose
// requests carry no parent handle (no profiler, or net events not enabled) allocates nothing.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace railscope::net::verbs {

class QpEvents {
 public:
  // `requests` request slots (the connection's pool), each with one handle per QP.
  void set_requests(size_t requests) { requests_ = requests; }
  // The handles of request slot `r` on a connection of `nqps` QPs (allocated on first use); empty when
  // r is not a slot.
  std::span<void*> of(size_t r, size_t nqps) {
    if (r >= requests_ || nqps == 0) return {};
    if (handles_.empty()) {
      nqps_ = nqps;
      handles_.assign(requests_ * nqps_, nullptr);
    }
    return {handles_.data() + r * nqps_, nqps_};
  }
  // Whether any event was ever started (the handles are allocated with the first): none on a
  // connection whose requests carry no parent handle, whatever profiler callback NCCL gave.
  bool allocated() const { return !handles_.empty(); }
  // Whether request slot `r` has an event not stopped yet.
  bool live(size_t r) const {
    if (r >= requests_ || handles_.empty()) return false;
    for (size_t q = 0; q < nqps_; ++q)
      if (handles_[r * nqps_ + q] != nullptr) return true;
    return false;
  }

 private:
  size_t requests_ = 0;
  size_t nqps_ = 0;
  std::vector<void*> handles_;
};

}  // namespace railscope::net::verbs
