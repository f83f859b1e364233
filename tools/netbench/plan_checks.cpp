// SPDX-License-Identifier: Apache-2.0
#include "plan_checks.h"

#include <cstring>

#include "transfer.h"

namespace railscope::netbench {

std::optional<std::string> check_run_params(const RunParams& p) {
  if (p.buffer_bytes == 0 || p.buffer_bytes > kMaxBufferBytes)
    return "the client asks for " + std::to_string(p.buffer_bytes) +
           "-byte buffers; netbench registers at most " + std::to_string(kMaxBufferBytes) +
           " bytes per direction";
  if (p.verify > 1) return "the client's verify flag is " + std::to_string(p.verify) + " (0 or 1)";
  if (p.modes == 0 || (p.modes & ~uint32_t{kModeBandwidth | kModeLatency}) != 0)
    return "the client's modes are " + std::to_string(p.modes) + " (1 bandwidth, 2 latency, 3 both)";
  if (p.timeout_s == 0 || p.timeout_s > kMaxTimeoutS)
    return "the client's timeout is " + std::to_string(p.timeout_s) + " s (1 to " +
           std::to_string(kMaxTimeoutS) + ")";
  if (p.reserved != 0) return "the client's parameters have a non-zero reserved field";
  return std::nullopt;
}

std::optional<std::string> check_size_plan(const SizePlan& plan, uint64_t region_bytes) {
  const std::string what = "the client's plan for size " + std::to_string(plan.size) + ": ";
  if (plan.recvs < 1 || plan.recvs > kMaxRecvs)
    return what + std::to_string(plan.recvs) + " buffers per receive (1 to " + std::to_string(kMaxRecvs) +
           ")";
  if (plan.window < 1 || plan.window > kMaxWindow)
    return what + "window " + std::to_string(plan.window) + " (1 to " + std::to_string(kMaxWindow) + ")";
  if (plan.size > kMaxMessageBytes)
    return what + "larger than netbench's largest message (" + std::to_string(kMaxMessageBytes) + " bytes)";
  // Both phases use the slots of the bandwidth layout at most (latency: two).
  const SlotLayout l = slot_layout(plan);
  uint64_t needed = 0;
  if (__builtin_mul_overflow(plan.size, uint64_t{l.send_slots}, &needed) || needed > region_bytes)
    return what + std::to_string(l.send_slots) + " slots do not fit the " + std::to_string(region_bytes) +
           "-byte buffer";
  if (plan.messages % plan.recvs != 0 || plan.warmup % plan.recvs != 0)
    return what + "messages (" + std::to_string(plan.messages) + ") and warmup (" +
           std::to_string(plan.warmup) + ") must be whole grouped receives of " + std::to_string(plan.recvs);
  if (plan.warmup > plan.messages)
    return what + "warmup " + std::to_string(plan.warmup) + " exceeds the " + std::to_string(plan.messages) +
           " messages";
  if (plan.lat_warmup > plan.lat_iters)
    return what + "latency warmup " + std::to_string(plan.lat_warmup) + " exceeds the " +
           std::to_string(plan.lat_iters) + " round trips";
  return std::nullopt;
}

std::string peer_text(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  const void* nul = std::memchr(p, 0, size);
  const size_t n = nul != nullptr ? static_cast<size_t>(static_cast<const unsigned char*>(nul) - p) : size;
  std::string out(reinterpret_cast<const char*>(p), n);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

}  // namespace railscope::netbench
