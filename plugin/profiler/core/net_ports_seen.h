// SPDX-License-Identifier: Apache-2.0
// The ports railscope's net plugin says a communicator's connections use (RailscopeNetPort_v1
// NetPlugin events, net_descriptors.h), and whether it must stage their traffic through host memory.
// Written on NCCL's threads (lock-free, no allocation), read by the monitor thread. Fixed size: a
// rank drives a handful of ports; more distinct ports than slots are ignored.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "railscope/nccl/net_descriptors.h"

namespace railscope::profiler {

struct SeenPort {
  std::string name;  // "mlx5_0:1"
  int speed_mbps = 0;
};

// What the monitor reads: the ports (in the order first seen) and the host-staging evidence.
struct NetPortsSnapshot {
  std::vector<SeenPort> ports;
  std::string host_staged_port;    // the first port reported as staging through host memory ("" none)
  std::string host_staged_reason;  // its catalogue id as the net plugin gave it ("" unknown)
};

class NetPortsSeen {
 public:
  static constexpr uint32_t kSlots = 16;
  static constexpr size_t kNameLen = nccl::kRailscopeNetPortNameLen + 12;  // "device:port"
  static constexpr size_t kReasonLen = 48;

  // NCCL's thread: the descriptor is read here only (valid for the duration of the call).
  void note(const nccl::RailscopeNetPort_v1& d);
  // Bumped each time a port or the host-staging evidence is first recorded.
  uint32_t generation() const { return generation_.load(std::memory_order_acquire); }
  NetPortsSnapshot snapshot() const;

 private:
  struct Slot {
    std::atomic<uint64_t> key{0};  // hash of the name, never 0; 0 = free
    std::atomic<bool> ready{false};
    int speed_mbps = 0;
    std::array<char, kNameLen> name{};
  };
  std::array<Slot, kSlots> slots_;
  std::atomic<int> staged_claimed_{0};
  std::atomic<bool> staged_ready_{false};
  std::array<char, kNameLen> staged_port_{};
  std::array<char, kReasonLen> staged_reason_{};
  std::atomic<uint32_t> generation_{0};
};

}  // namespace railscope::profiler
