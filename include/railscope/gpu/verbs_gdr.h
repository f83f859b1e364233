// SPDX-License-Identifier: Apache-2.0
// The verbs side of GPUDirect, for the net plugin: whether a device accepts DMA-BUF memory
// registrations (NCCL's probe), and what a failed registration of GPU memory means.
#pragma once

#include <string>

#include "railscope/core/diagnosis.h"
#include "railscope/gpu/platform_support.h"

struct ibv_pd;

namespace railscope::gpu {

enum class DmabufProbe { Supported, Unsupported, Unknown };
std::string_view to_string(DmabufProbe p);

struct DmabufProbeResult {
  DmabufProbe result = DmabufProbe::Unknown;
  int err = 0;         // errno from ibv_reg_dmabuf_mr(fd = -1)
  std::string detail;  // for the report
};

// Registers a DMA-BUF MR with fd -1 on `pd`: EOPNOTSUPP/EPROTONOSUPPORT → the kernel/provider lacks
// dma-buf MRs; any other failure (EBADF expected) → supported. An unexpected success is
// deregistered at once and counted as supported. pd == nullptr → Unknown.
DmabufProbeResult probe_verbs_dmabuf(ibv_pd* pd);
// The errno → verdict rule alone (testable without a device).
DmabufProbe classify_dmabuf_probe_errno(int err);

enum class RegKind { Host, CudaPeerMemory, Dmabuf };

// Maps a failed ibv_reg_mr / ibv_reg_dmabuf_mr to a finding:
//   CUDA memory + EFAULT            → gdr.cuda_reg_efault (no peer-memory client; says which is missing)
//   DMA-BUF + EOPNOTSUPP/EPROTONOSUPPORT → gdr.dmabuf_unsupported
//   ENOMEM                          → memlock.too_low (with the current RLIMIT_MEMLOCK)
//   anything else                   → reg.failed
// `device` names the NIC, `size` the buffer; `peer` may be null when unknown.
diag::Finding classify_registration_failure(RegKind kind, int err, const std::string& device, size_t size,
                                            const PeerMemoryStatus* peer);

}  // namespace railscope::gpu
