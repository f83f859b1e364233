// SPDX-License-Identifier: Apache-2.0
// Registration of GPU memory on a connection's lanes, for regMr(NCCL_PTR_CUDA) and regMrDmaBuf.
//  - NCCL_PTR_CUDA: ibv_reg_mr on the device pointer (a peer-memory client pins the GPU pages),
//    through each lane's MR cache (GPU and host virtual addresses never overlap under CUDA's unified
//    addressing, so one range index serves both). Refused with the port's gdr.* reason when the
//    port does not offer NCCL_PTR_CUDA; a failed ibv_reg_mr is explained by
//    classify_registration_failure(RegKind::CudaPeerMemory) (EFAULT: no peer-memory client).
//  - DMA-BUF (fd >= 0): ibv_reg_dmabuf_mr(pd, offset, size, iova = data, fd), one MR per lane owned
//    by the handle, outside the cache: NCCL hands a fresh fd for each call and closes it after, so
//    an (fd, offset) key would be reused by unrelated buffers. The device is the judge (as in NCCL's
//    IB transport): the call is made even where the port does not offer NCCL_PTR_DMABUF, and a
//    failure is explained by classify_registration_failure(RegKind::Dmabuf) plus the port's reason.
//    fd < 0 registers as regMr(type) does.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugin/net/verbs/connection.h"

namespace railscope::net::verbs {

Status register_cuda_on_lanes(Connection& c, void* data, size_t size, VerbsMr** out);
Status register_dmabuf_on_lanes(Connection& c, void* data, size_t size, int type, uint64_t offset, int fd,
                                VerbsMr** out);

}  // namespace railscope::net::verbs
