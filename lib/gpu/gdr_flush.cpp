// SPDX-License-Identifier: Apache-2.0
// Flush rules for GPUDirect receives (NCCL 2.28: net_ib.cc flushEnabled, paths.cc ncclTopoNeedFlush).
#include "railscope/gpu/gdr_flush.h"

#include "railscope/core/params.h"
#include "railscope/gpu/gdr_decision.h"

namespace railscope::gpu {

FlushPolicy gdr_flush_policy(int nic_ptr_support) {
  FlushPolicy p;
  if ((nic_ptr_support & (kPtrCuda | kPtrDmabuf)) == 0) {
    p.reason = "no GPUDirect on this NIC: receives land in host memory, nothing to flush";
    return p;
  }
  if (params::get_bool("NCCL_GDR_FLUSH_DISABLE")) {
    p.reason = "NCCL_GDR_FLUSH_DISABLE=1: GPUDirect receives are not flushed";
    return p;
  }
  p.enabled = true;
  p.reason = "GPUDirect receives are flushed by a loopback RDMA read when NCCL asks (iflush)";
  return p;
}

bool nccl_calls_flush(bool props_force_flush, bool net_force_flush_env, int gpu_cc_major,
                      bool nic_within_pxb_and_c2c) {
  if (props_force_flush || net_force_flush_env) return true;
  if (nic_within_pxb_and_c2c) return true;
  return gpu_cc_major < 9;
}

}  // namespace railscope::gpu
