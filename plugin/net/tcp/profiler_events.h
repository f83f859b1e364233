// SPDX-License-Identifier: Apache-2.0
// Events for NCCL's profiler (net ABI v10+, when NCCL passes a profiler callback and a per-request
// parent handle): one event per isend and per receive buffer, started when posted and stopped when
// test() reports it done, described with NCCL's socket descriptor, version 1 (pluginId =
// socket type | 1; descriptor: type = socket event, then the control socket's fd, the operation
// (0 send, 1 receive) and the message length). Declared here in our own words from the ABI facts.
#pragma once

#include <cstddef>
#include <cstdint>

#include "railscope/nccl/common.h"

namespace railscope::net::tcp {

inline constexpr int64_t kProfilerSocketPluginId = (int64_t{2} << 16) | 1;
inline constexpr uint8_t kProfileSocketEvent = 1;
inline constexpr int kProfileOpSend = 0;
inline constexpr int kProfileOpRecv = 1;

struct SocketEventDescr {
  uint8_t type = kProfileSocketEvent;
  struct {
    int fd;
    int op;
    size_t length;
  } sock{};
};

inline void profile_start(ncclProfilerCallback_t cb, void* parent, void** event, SocketEventDescr* d, int fd,
                          int op, size_t length) {
  *event = nullptr;
  if (cb == nullptr || parent == nullptr) return;
  d->type = kProfileSocketEvent;
  d->sock = {fd, op, length};
  cb(event, ncclProfilerNetEventStart, parent, kProfilerSocketPluginId, d);
}

inline void profile_stop(ncclProfilerCallback_t cb, void** event) {
  if (cb == nullptr || *event == nullptr) return;
  cb(event, ncclProfilerNetEventStop, nullptr, 0, nullptr);
  *event = nullptr;
}

}  // namespace railscope::net::tcp
