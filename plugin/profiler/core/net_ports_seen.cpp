// SPDX-License-Identifier: Apache-2.0
#include "plugin/profiler/core/net_ports_seen.h"

#include <cstdio>
#include <cstring>

namespace railscope::profiler {
namespace {

// "device:port" into out (NUL-terminated, truncated to fit); its length.
size_t port_name(const nccl::RailscopeNetPort_v1& d, std::array<char, NetPortsSeen::kNameLen>* out) {
  const size_t dev_len = strnlen(d.device, sizeof d.device);
  char port[12];
  const int port_len = std::snprintf(port, sizeof port, ":%d", d.port);
  size_t n = 0;
  for (size_t i = 0; i < dev_len && n + 1 < out->size(); ++i) (*out)[n++] = d.device[i];
  for (int i = 0; i < port_len && n + 1 < out->size(); ++i) (*out)[n++] = port[i];
  (*out)[n] = '\0';
  return n;
}

uint64_t name_key(const char* name, size_t len) {  // FNV-1a; never 0 (0 marks a free slot)
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < len; ++i) h = (h ^ static_cast<unsigned char>(name[i])) * 0x100000001b3ull;
  return h == 0 ? 1 : h;
}

}  // namespace

void NetPortsSeen::note(const nccl::RailscopeNetPort_v1& d) {
  if (strnlen(d.device, sizeof d.device) == 0) return;  // nothing to name the port by
  std::array<char, kNameLen> name{};
  const size_t len = port_name(d, &name);
  const uint64_t key = name_key(name.data(), len);
  for (Slot& s : slots_) {
    uint64_t cur = s.key.load(std::memory_order_acquire);
    if (cur == 0 && s.key.compare_exchange_strong(cur, key, std::memory_order_acq_rel)) {
      s.name = name;
      s.speed_mbps = d.speedMbps > 0 ? d.speedMbps : 0;
      s.ready.store(true, std::memory_order_release);
      generation_.fetch_add(1, std::memory_order_acq_rel);
      break;
    }
    if (cur == key) break;  // seen before (a name collision counts as seen: harmless)
  }
  if (d.hostStaged == 0 || staged_claimed_.exchange(1, std::memory_order_acq_rel) != 0) return;
  staged_port_ = name;
  // The reason is a static string of the net plugin's; copied, bounded, never kept as a pointer.
  if (d.reason != nullptr) {
    const size_t n = strnlen(d.reason, kReasonLen - 1);
    std::memcpy(staged_reason_.data(), d.reason, n);
    staged_reason_[n] = '\0';
  }
  staged_ready_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

NetPortsSnapshot NetPortsSeen::snapshot() const {
  NetPortsSnapshot out;
  for (const Slot& s : slots_)
    if (s.ready.load(std::memory_order_acquire)) out.ports.push_back({s.name.data(), s.speed_mbps});
  if (staged_ready_.load(std::memory_order_acquire)) {
    out.host_staged_port = staged_port_.data();
    out.host_staged_reason = staged_reason_.data();
  }
  return out;
}

}  // namespace railscope::profiler
