// The bookkeeping both engines' connect() share. NCCL calls connect() again and again with the
// same handle until it yields a comm; the engine keeps the state of each connect in progress under
// an id it writes into NCCL's copy of the handle (0 = none yet). step_pending_connect finds that
// state (or has the engine create and start it), advances it once, and forgets it when it yields a
// comm or fails.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "plugin/net/transport.h"

namespace railscope::net {

// How an engine's handle carries the id (the handle formats differ per engine).
struct ConnectIdCodec {
  void (*store)(HandleBytes handle, uint64_t id);  // rewrites the id field of an encoded handle
  Status (*bad_handle)(const std::string& why);    // the engine's "invalid connection handle" error
};

// pending: the engine's map from id to connector (std::map or std::unordered_map of unique_ptr).
// make(&connector, &id) creates and starts a new connector and picks its id (non-zero). The
// connector's step(CommT**) leaves the comm null until the connection is ready.
template <class CommT, class Map, class Make>
Status step_pending_connect(std::mutex& mutex, Map& pending, const ConnectIdCodec& codec, uint64_t handle_id,
                            HandleBytes handle, Make&& make, SendComm** out) {
  std::lock_guard lock(mutex);
  uint64_t id = handle_id;
  typename Map::mapped_type::element_type* c = nullptr;
  if (id == 0) {
    typename Map::mapped_type conn;
    if (Status st = std::forward<Make>(make)(&conn, &id); !st.ok()) return st;
    codec.store(handle, id);
    c = conn.get();
    pending.emplace(id, std::move(conn));
  } else {
    auto it = pending.find(id);
    if (it == pending.end())
      return codec.bad_handle(
          fmt::format("it carries connection id {:#x}, which no connect() in this process started", id));
    c = it->second.get();
  }
  CommT* comm = nullptr;
  Status st = c->step(&comm);
  if (!st.ok() || comm != nullptr) {
    pending.erase(id);
    codec.store(handle, 0);
  }
  if (!st.ok()) return st;
  *out = comm;
  return Status::success();
}

}  // namespace railscope::net
