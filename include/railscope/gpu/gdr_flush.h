// SPDX-License-Identifier: Apache-2.0
// When GPUDirect receives need a flush (iflush: a loopback RDMA read from the GPU buffer so NIC
// writes are visible to the GPU before NCCL reads them), restating NCCL 2.28's rules.
#pragma once

#include <string>

namespace railscope::gpu {

struct FlushPolicy {
  bool enabled = false;  // the receive side keeps a loopback QP and iflush posts the RDMA read
  std::string reason;    // one line for the log
};

// The plugin side (NCCL's IB transport rule): flush is enabled on a receive comm when this NIC
// reports NCCL_PTR_CUDA or NCCL_PTR_DMABUF (nic_ptr_support) and NCCL_GDR_FLUSH_DISABLE is 0.
FlushPolicy gdr_flush_policy(int nic_ptr_support);

// The NCCL side (ncclTopoNeedFlush): NCCL calls iflush for a GPUDirect receive when the plugin sets
// forceFlush, or NCCL_NET_FORCE_FLUSH=1, or the GPU is older than compute capability 9.0, or the
// NIC is within PXB while the GPU reaches its CPU by C2C. cc_major < 0 (unknown) counts as needing it.
bool nccl_calls_flush(bool props_force_flush, bool net_force_flush_env, int gpu_cc_major,
                      bool nic_within_pxb_and_c2c);

}  // namespace railscope::gpu
