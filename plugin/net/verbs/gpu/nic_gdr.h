// SPDX-License-Identifier: Apache-2.0
// What one port (or a device fused from several) offers NCCL for GPU memory, and why not more: the
// decision gdr_support.h makes, kept by the port (discovery.h).
#pragma once

#include <vector>

#include "railscope/core/diagnosis.h"
#include "railscope/gpu/ptr_support.h"
#include "railscope/gpu/verbs_gdr.h"

namespace railscope::net::verbs {

// One port's (or a fused device's) decision.
struct NicGdr {
  int ptr_support = gpu::kPtrHost;
  gpu::DmabufProbe dmabuf_probe = gpu::DmabufProbe::Unknown;
  std::vector<diag::Finding> refusals;  // every reason GPU memory is not offered, most important first
  int no_cuda = -1;                     // index in refusals explaining a missing NCCL_PTR_CUDA, -1 none
  int no_dmabuf = -1;                   // ... a missing NCCL_PTR_DMABUF
  const diag::Finding* cuda_refusal() const;
  const diag::Finding* dmabuf_refusal() const;
};

}  // namespace railscope::net::verbs
