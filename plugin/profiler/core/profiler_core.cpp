// SPDX-License-Identifier: Apache-2.0
// Communicator lifetime: init builds the pools and registers with the monitor; finalize drains and
// frees. Everything else is in event_handlers.cpp.
#include "plugin/profiler/core/profiler_core.h"

#include <new>

#include "plugin/profiler/core/comm_state.h"
#include "plugin/profiler/core/monitor.h"
#include "railscope/core/log.h"
#include "railscope/core/params.h"
#include "railscope/nccl/profiler.h"

namespace railscope::profiler {

ncclResult_t init_comm(const CommInit& info, void** ctx, int* activation_mask) {
  if (ctx == nullptr) return ncclInvalidArgument;
  *ctx = nullptr;
  if (info.logger != nullptr) log::set_nccl_logger(info.logger);
  int mask = static_cast<int>(params::get_int("RAILSCOPE_PROFILE_MASK"));
  if (info.abi < 3) mask &= ~(ncclProfileKernelCh | ncclProfileNetPlugin);  // not in the v1/v2 ABI
  if (info.abi < 5) mask &= 0xFF;                                           // API events are v5+
  PoolSizes sizes;
  sizes.colls = static_cast<uint32_t>(params::get_int("RAILSCOPE_PROFILE_POOL_COLLS"));
  sizes.proxy = static_cast<uint32_t>(params::get_int("RAILSCOPE_PROFILE_POOL_PROXY"));
  CommIdentity id;
  id.hash = info.hash;
  id.name = info.name;
  id.rank = info.rank;
  id.nranks = info.nranks;
  id.nnodes = info.nnodes;
  id.abi = info.abi;
  CommState* c = new (std::nothrow) CommState(std::move(id), mask, sizes);
  if (c == nullptr) {
    if (activation_mask != nullptr) *activation_mask = 0;
    RS_WARN(
        "railscope profiler: out of memory for the event pools ({} collectives, {} proxy events); "
        "profiling disabled for this communicator",
        sizes.colls, sizes.proxy);
    return ncclSystemError;
  }
  Monitor::instance().add(c);
  // The mask is one process-wide int inside NCCL; every communicator's init writes the same value.
  if (activation_mask != nullptr) *activation_mask = mask;
  *ctx = c;
  RS_INFO(NCCL_INIT, "railscope profiler: ABI v{} comm {:#018x} rank {}/{} mask {:#x}, profile {}", info.abi,
          info.hash, info.rank, info.nranks, mask, Monitor::instance().path());
  return ncclSuccess;
}

ncclResult_t finalize_comm(void* ctx) {
  auto* c = static_cast<CommState*>(ctx);
  if (c == nullptr) return ncclSuccess;
  Monitor::instance().remove(c);
  delete c;
  return ncclSuccess;
}

}  // namespace railscope::profiler
