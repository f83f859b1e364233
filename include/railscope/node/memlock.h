// SPDX-License-Identifier: Apache-2.0
// Locked-memory limit: RLIMIT_MEMLOCK and CAP_IPC_LOCK, against what NCCL's registered buffers need.
//
// Threshold: 64 MiB. NCCL registers its network buffers with ibv_reg_mr. Without GPUDirect RDMA they
// live in host memory: per channel and per peer, the Simple protocol alone uses NCCL_BUFFSIZE
// (4 MiB) for sending and 4 MiB for receiving, plus LL/LL128 buffers and the FIFOs. Two channels to
// two peers already exceed 32 MiB, and jobs typically run 8-32 channels; the field report
// nccl-tests#206 failed with `ulimit -l` = 8 MiB. Below 64 MiB is therefore an error (memlock.too_low);
// a finite limit at or above it is reported as information (NCCL's documentation asks for unlimited).
// A process with CAP_IPC_LOCK (root) is not bound by the limit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "railscope/core/diagnosis.h"

namespace railscope::node {

inline constexpr uint64_t kMemlockUnlimited = UINT64_MAX;
inline constexpr uint64_t kMemlockNeededBytes = 64ull << 20;

struct MemlockState {
  uint64_t soft_bytes = kMemlockUnlimited;  // kMemlockUnlimited = RLIM_INFINITY
  uint64_t hard_bytes = kMemlockUnlimited;
  std::optional<bool> cap_ipc_lock;  // nullopt when it could not be read
  std::string error;                 // why something could not be read
};

// getrlimit(RLIMIT_MEMLOCK) and bit 14 of CapEff in `proc_status` (default /proc/self/status).
MemlockState read_memlock(const std::string& proc_status = "/proc/self/status");
// getrlimit(RLIMIT_MEMLOCK) alone (cap_ipc_lock left unknown): what an error path names as the limit.
MemlockState read_memlock_limits();
// Parses the CapEff line of a /proc/<pid>/status text; nullopt when absent or garbage.
std::optional<bool> cap_ipc_lock_from_status(const std::string& status_text);

// "64 KiB", "8 MiB", "unlimited".
std::string memlock_text(uint64_t bytes);

// memlock.too_low (error) or memlock.finite (info), or nothing.
std::vector<diag::Finding> evaluate_memlock(const MemlockState& state);

}  // namespace railscope::node
