// SPDX-License-Identifier: Apache-2.0
// RLIMIT_MEMLOCK and CAP_IPC_LOCK, evaluated against NCCL's registered-buffer needs (see memlock.h).
#include "railscope/node/memlock.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace railscope::node {

std::optional<bool> cap_ipc_lock_from_status(const std::string& status_text) {
  std::istringstream in(status_text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("CapEff:")) continue;
    std::string hex = line.substr(7);
    const size_t b = hex.find_first_not_of(" \t");
    if (b == std::string::npos) return std::nullopt;
    hex = hex.substr(b);
    while (!hex.empty() && std::isspace(static_cast<unsigned char>(hex.back()))) hex.pop_back();
    if (hex.empty() || hex.size() > 16) return std::nullopt;
    uint64_t v = 0;
    for (char c : hex) {
      int d = 0;
      if (c >= '0' && c <= '9')
        d = c - '0';
      else if (c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        d = c - 'A' + 10;
      else
        return std::nullopt;
      v = (v << 4) | static_cast<uint64_t>(d);
    }
    constexpr int kCapIpcLock = 14;
    return ((v >> kCapIpcLock) & 1u) != 0;
  }
  return std::nullopt;
}

MemlockState read_memlock_limits() {
  MemlockState s;
  rlimit rl{};
  if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
    s.soft_bytes = rl.rlim_cur == RLIM_INFINITY ? kMemlockUnlimited : static_cast<uint64_t>(rl.rlim_cur);
    s.hard_bytes = rl.rlim_max == RLIM_INFINITY ? kMemlockUnlimited : static_cast<uint64_t>(rl.rlim_max);
  } else {
    s.error = fmt::format("getrlimit(RLIMIT_MEMLOCK): {}", std::strerror(errno));
  }
  return s;
}

MemlockState read_memlock(const std::string& proc_status) {
  MemlockState s = read_memlock_limits();
  std::ifstream in(proc_status);
  if (in) {
    std::stringstream ss;
    ss << in.rdbuf();
    s.cap_ipc_lock = cap_ipc_lock_from_status(ss.str());
  }
  if (!s.cap_ipc_lock) s.error += (s.error.empty() ? "" : "; ") + ("no CapEff line in " + proc_status);
  return s;
}

std::string memlock_text(uint64_t bytes) {
  if (bytes == kMemlockUnlimited) return "unlimited";
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

std::vector<diag::Finding> evaluate_memlock(const MemlockState& s) {
  std::vector<diag::Finding> out;
  if (s.cap_ipc_lock.value_or(false)) return out;  // CAP_IPC_LOCK ignores the limit
  if (s.soft_bytes == kMemlockUnlimited) return out;
  const std::string cap = s.cap_ipc_lock ? "without CAP_IPC_LOCK" : "CAP_IPC_LOCK unknown";
  if (s.soft_bytes < kMemlockNeededBytes) {
    const std::string fix =
        s.hard_bytes == kMemlockUnlimited || s.hard_bytes >= kMemlockNeededBytes
            ? fmt::format(
                  "Run `ulimit -l unlimited` (the hard limit is {}) before the job; in a pod add the "
                  "IPC_LOCK capability",
                  memlock_text(s.hard_bytes))
            : std::string();  // generic fix: limits.conf / --ulimit memlock=-1 / IPC_LOCK
    out.push_back(
        diag::make("memlock.too_low",
                   fmt::format("RLIMIT_MEMLOCK is {} (hard {}), {}; NCCL's buffers need at least {}",
                               memlock_text(s.soft_bytes), memlock_text(s.hard_bytes), cap,
                               memlock_text(kMemlockNeededBytes)),
                   fix));
  } else {
    out.push_back(diag::make("memlock.finite",
                             fmt::format("RLIMIT_MEMLOCK is {} (hard {}), {}", memlock_text(s.soft_bytes),
                                         memlock_text(s.hard_bytes), cap)));
  }
  return out;
}

}  // namespace railscope::node
