// SPDX-License-Identifier: Apache-2.0
// Non-zero random 64-bit ids (listen nonces, connect ids), thread-safe, seeded once per process.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>

namespace railscope::net {

inline uint64_t random_id() {
  static std::mutex m;
  static std::mt19937_64 gen(
      std::random_device{}() ^
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (static_cast<uint64_t>(getpid()) << 32));
  std::lock_guard lock(m);
  uint64_t v = 0;
  while (v == 0) v = gen();
  return v;
}

}  // namespace railscope::net
