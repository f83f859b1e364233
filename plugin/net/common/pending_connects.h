// SPDX-License-Identifier: Apache-2.0
// The bookkeeping both engines' connect() share. NCCL calls connect() again and again with the
// same handle until it yields a comm; the engine keeps the state of each connect in progress under
// an id it writes into NCCL's copy of the handle (0 = none yet). PendingConnects::step finds that
// state (or has the engine create and start it), advances it once, and forgets it when it yields a
// comm or fails. A connect NCCL abandoned (never called again) expires: entries untouched for twice
// the handshake timeout are dropped the next time the map is touched. At most kMaxPendingConnects
// connects are in progress at once; beyond that connect() fails (net.too_many_connects).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "plugin/net/transport.h"

namespace railscope::net {

// How an engine's handle carries the id (the handle formats differ per engine).
struct ConnectIdCodec {
  void (*store)(HandleBytes handle, uint64_t id);  // rewrites the id field of an encoded handle
  Status (*bad_handle)(const std::string& why);    // the engine's "invalid connection handle" error
};

inline constexpr size_t kMaxPendingConnects = 4096;

// Connector: the engine's connect state machine; its step(CommT**) leaves the comm null until the
// connection is ready.
template <class Connector>
class PendingConnects {
 public:
  using Clock = std::chrono::steady_clock;

  // make(&connector, &id) creates and starts a new connector and picks its id (non-zero).
  // expire_after: how long an untouched entry is kept (twice the engine's handshake timeout).
  template <class CommT, class Make>
  Status step(const ConnectIdCodec& codec, uint64_t handle_id, HandleBytes handle, Make&& make,
              SendComm** out, Clock::duration expire_after, Clock::time_point now = Clock::now()) {
    std::lock_guard lock(mutex_);
    expire(now, expire_after);
    uint64_t id = handle_id;
    Connector* c = nullptr;
    if (id == 0) {
      if (entries_.size() >= kMaxPendingConnects)
        return Status::fail(
            ncclSystemError, "net.too_many_connects",
            fmt::format("{} connect() calls are already in progress in this process", entries_.size()));
      std::unique_ptr<Connector> conn;
      if (Status st = std::forward<Make>(make)(&conn, &id); !st.ok()) return st;
      codec.store(handle, id);
      c = conn.get();
      entries_.emplace(id, Entry{std::move(conn), now});
    } else {
      auto it = entries_.find(id);
      if (it == entries_.end())
        return codec.bad_handle(fmt::format(
            "it carries connection id {:#x}, which no connect() in this process started (or it was "
            "abandoned for longer than {} s and expired)",
            id, std::chrono::duration_cast<std::chrono::seconds>(expire_after).count()));
      it->second.touched = now;
      c = it->second.connector.get();
    }
    CommT* comm = nullptr;
    Status st = c->step(&comm);
    if (!st.ok() || comm != nullptr) {
      entries_.erase(id);
      codec.store(handle, 0);
    }
    if (!st.ok()) return st;
    *out = comm;
    return Status::success();
  }

  size_t size() {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }
  void clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
  }

 private:
  struct Entry {
    std::unique_ptr<Connector> connector;
    Clock::time_point touched;
  };
  void expire(Clock::time_point now, Clock::duration expire_after) {
    for (auto it = entries_.begin(); it != entries_.end();)
      it = now - it->second.touched > expire_after ? entries_.erase(it) : std::next(it);
  }

  std::mutex mutex_;
  std::unordered_map<uint64_t, Entry> entries_;
};

}  // namespace railscope::net
