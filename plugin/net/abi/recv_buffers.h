// SPDX-License-Identifier: Apache-2.0
// The receive buffers of one irecv or iflush as the ABI adapters hand them to the engine: room for
// kMaxRecvs, of which a call fills only the first n (NCCL's proxy passes n = 1 but for grouped receives).
// The room is left uninitialised: an array of RecvBuffers with its member initialisers zero-filled all
// eight (40 words) on every irecv, the adapter's largest cost per message (bench/net_instructions).
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <span>
#include <type_traits>

#include "plugin/net/transport.h"

namespace railscope::net::abi {

inline constexpr int kMaxRecvs = 8;

class RecvBuffers {
 public:
  static_assert(std::is_trivially_copyable_v<RecvBuffer> && std::is_trivially_destructible_v<RecvBuffer>);

  RecvBuffers() {}  // NOLINT: leaves the room uninitialised on purpose
  RecvBuffers(const RecvBuffers&) = delete;
  RecvBuffers& operator=(const RecvBuffers&) = delete;

  // Buffer i (0 <= i < kMaxRecvs); set 0..n-1 before first(n).
  void set(int i, const RecvBuffer& b) { std::construct_at(at(i), b); }
  // The first n (0..kMaxRecvs), all set.
  std::span<const RecvBuffer> first(int n) const {
    return {std::launder(reinterpret_cast<const RecvBuffer*>(room_)), static_cast<size_t>(n)};
  }

 private:
  RecvBuffer* at(int i) { return reinterpret_cast<RecvBuffer*>(room_) + i; }
  alignas(RecvBuffer) std::byte room_[sizeof(RecvBuffer) * kMaxRecvs];
};

}  // namespace railscope::net::abi
