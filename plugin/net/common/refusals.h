// How a listener treats connections that never proved they were meant for it (both engines): a
// bound on how many such connections it holds (a flood must not run the training process out of
// file descriptors) and a log that names each kind of refusal once instead of once per connection.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "plugin/net/transport.h"

namespace railscope::net {

// Unverified connections one listener holds at most. NCCL connects a handful of sockets to a listen
// comm (the TCP engine: one control socket plus at most 64 data sockets per connection); more than
// this is a flood, and the newest connection is refused (closed) instead of queued.
inline constexpr size_t kMaxUnverifiedPerListener = 256;

// Remembers which kinds of refusal were logged; bounded (kinds past kMaxKinds are not logged).
class RefusalLog {
 public:
  static constexpr size_t kMaxKinds = 16;
  // true the first time kind is seen (the caller logs then), false afterwards.
  bool first(std::string_view kind) {
    std::lock_guard lock(mutex_);
    for (const auto& k : seen_)
      if (k == kind) return false;
    if (seen_.size() >= kMaxKinds) return false;
    seen_.emplace_back(kind);
    return true;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> seen_;
};

// The finding for a refused connection of a flood at a listener.
inline Status connection_flood(const std::string& peer, const std::string& listener, size_t bound) {
  return Status::fail(ncclRemoteError, "peer.connection_flood",
                      fmt::format("listener {} holds {} connections that sent no valid hello yet; refused "
                                  "the newest, from {} (and refuses further ones while the flood lasts)",
                                  listener, bound, peer));
}

}  // namespace railscope::net
