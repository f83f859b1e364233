// SPDX-License-Identifier: Apache-2.0
// What a netbench server accepts from its client. The client is a peer on the network: every field
// of RunParams and SizePlan is checked against the bounds netbench itself plans within, with
// overflow-checked arithmetic, before any of it sizes a buffer or a loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "protocol.h"

namespace railscope::netbench {

// Registered host memory per direction, at most (twice the largest message, 1 GiB; the options refuse
// a larger --buffer-bytes).
constexpr uint64_t kMaxBufferBytes = 2ULL << 30;
// --buffer-bytes' floor: one page.
constexpr uint64_t kMinBufferBytes = 4096;
constexpr uint64_t kMaxMessageBytes = 1ULL << 30;  // --max-size, at most
constexpr uint32_t kMaxTimeoutS = 24 * 3600;       // --timeout, at most
constexpr uint32_t kMaxRecvs = 8;                  // buffers per grouped receive (NCCL_NET_MAX_RECVS)
constexpr uint32_t kMaxWindow = 32;                // receive requests in flight (NCCL_NET_MAX_REQUESTS)

// Each returns why the message is refused, or nothing when every field is within bounds.
std::optional<std::string> check_run_params(const RunParams& p);
// `region_bytes`: what this end registered per direction (RunParams::buffer_bytes, checked).
std::optional<std::string> check_size_plan(const SizePlan& plan, uint64_t region_bytes);

// Text a peer sent in a fixed-size field or a message: at most `size` bytes, up to the first NUL if
// any (the peer need not terminate it), control characters shown as '?'.
std::string peer_text(const void* data, size_t size);

}  // namespace railscope::netbench
