// SPDX-License-Identifier: Apache-2.0
// The one internal interface under every ABI version: the abi/ adapters translate NCCL's
// descriptors into EventDescr and call these. Every function tolerates NULL handles and contexts
// and never blocks on I/O (the monitor thread writes).
#pragma once

#include <cstdint>
#include <string>

#include "plugin/profiler/core/events.h"
#include "railscope/nccl/common.h"

namespace railscope::profiler {

struct CommInit {
  uint64_t hash = 0;
  std::string name;
  int rank = -1;
  int nranks = 0;  // 0 = unknown
  int nnodes = 0;
  int abi = 0;
  ncclDebugLogger_t logger = nullptr;
};

// Creates the communicator's state, writes the activation mask, starts the monitor if needed.
// On failure returns an error and leaves *ctx = nullptr and *mask = 0.
ncclResult_t init_comm(const CommInit& info, void** ctx, int* activation_mask);
void start_event(void* ctx, void** handle, const EventDescr& d);
void stop_event(void* handle);
// value: transSize (ProxyStep states) or pTimer (KernelChStop); data: NetPlugin update payload.
void record_state(void* handle, int state, uint64_t value, void* data);
ncclResult_t finalize_comm(void* ctx);

}  // namespace railscope::profiler
