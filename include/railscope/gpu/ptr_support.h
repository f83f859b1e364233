// SPDX-License-Identifier: Apache-2.0
// The ptrSupport bits a net plugin reports to NCCL (NCCL_PTR_HOST, NCCL_PTR_CUDA, NCCL_PTR_DMABUF), with
// NCCL's values, for code that decides them without including NCCL's headers.
#pragma once

namespace railscope::gpu {

inline constexpr int kPtrHost = 0x1;
inline constexpr int kPtrCuda = 0x2;
inline constexpr int kPtrDmabuf = 0x4;

}  // namespace railscope::gpu
