// SPDX-License-Identifier: Apache-2.0
// The verbs engine's wire constants: magics, protocol version and the bounds every decoder checks
// (handshake.h encodes and decodes with them; the out-of-band channel frames by them).
#pragma once

#include <cstddef>
#include <cstdint>

namespace railscope::net::verbs {

inline constexpr uint32_t kHandleMagic = 0x314e5352;   // "RSN1"
inline constexpr uint32_t kMessageMagic = 0x4d4e5352;  // "RSNM"
// 2: EndInfo carries eager_max; 3: 32 FIFO slots; 4: the FIFO's address travels in QPNS; 5: eager
// clear-to-sends written ahead, ring messages carry their ordinal per tag (eager.h); 6: FAILOVER
// messages (failover/failover_message.h), up to 8 devices per end, the receiver-driven clear-to-send
// carries 8 rkeys
inline constexpr uint16_t kProtocolVersion = 6;
inline constexpr int kMaxDevsPerEnd = 8;   // devices of a (virtual) NIC: NCCL_NET_MAX_DEVS_PER_NIC_V12
inline constexpr int kMaxQpsPerConn = 16;  // NCCL_IB_QPS_PER_CONNECTION upper bound
inline constexpr int kMaxQps = kMaxDevsPerEnd * kMaxQpsPerConn;
inline constexpr size_t kMaxMessageBody = 4096;
inline constexpr size_t kMessageHeaderSize = 12;
inline constexpr uint32_t kMaxEagerBytes = 65536;  // RAILSCOPE_NET_EAGER_MAX upper bound

}  // namespace railscope::net::verbs
