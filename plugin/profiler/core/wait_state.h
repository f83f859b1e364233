// SPDX-License-Identifier: Apache-2.0
// The ProxyOp / ProxyStep states NCCL records (include/railscope/nccl/profiler.h): their names and what
// waiting in each means. The one classification used for the per-ProxyOp wait buckets (event handlers),
// for a wait still running when a record is written (monitor) and for a hang's "still waiting" list
// (hang report); docs/profile-format.md gives the meanings (waits[], diag.waiting[].meaning).
#pragma once

#include <cstdint>

namespace railscope::profiler {

enum class WaitKind : uint8_t {
  PeerLateOrDead,  // no clear-to-send / no data from the peer yet
  NetworkPath,     // posted, no completion yet
  LocalGpu,        // the local GPU kernel has not filled / consumed the slot yet
  Unknown,         // between steps, or a state with no wait
};

WaitKind classify_wait(uint8_t state);
const char* wait_kind_name(WaitKind kind);  // peer_late_or_dead | network_path | local_gpu | unknown

// Name of a state ("SendPeerWait", …; "Idle" for none) and wait_kind_name(classify_wait(state)).
const char* state_name(uint8_t state);
const char* state_meaning(uint8_t state);

}  // namespace railscope::profiler
