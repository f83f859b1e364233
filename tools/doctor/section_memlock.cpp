// SPDX-License-Identifier: Apache-2.0
// Memlock: RLIMIT_MEMLOCK and CAP_IPC_LOCK against NCCL's registered-buffer needs.
#include <fmt/format.h>

#include "doctor.h"

namespace railscope::doctor {

Section section_memlock(const NodeFacts& facts) {
  Section s;
  s.name = "memlock";
  const auto& m = facts.memlock;
  auto bytes = [](uint64_t v) {
    return v == node::kMemlockUnlimited ? nlohmann::json("unlimited") : nlohmann::json(v);
  };
  s.json = {{"soft_bytes", bytes(m.soft_bytes)},
            {"hard_bytes", bytes(m.hard_bytes)},
            {"soft", node::memlock_text(m.soft_bytes)},
            {"hard", node::memlock_text(m.hard_bytes)},
            {"cap_ipc_lock", m.cap_ipc_lock ? nlohmann::json(*m.cap_ipc_lock) : nlohmann::json(nullptr)},
            {"needed_bytes", node::kMemlockNeededBytes},
            {"error", known(m.error)}};
  s.findings = node::evaluate_memlock(m);
  s.text.push_back(
      fmt::format("RLIMIT_MEMLOCK soft {}, hard {}; CAP_IPC_LOCK {}; NCCL needs at least {} → {}",
                  node::memlock_text(m.soft_bytes), node::memlock_text(m.hard_bytes),
                  m.cap_ipc_lock ? (*m.cap_ipc_lock ? "yes (limit does not apply)" : "no") : "unknown",
                  node::memlock_text(node::kMemlockNeededBytes),
                  s.findings.empty() ? std::string("ok") : std::string(s.findings[0].id())));
  return s;
}

}  // namespace railscope::doctor
