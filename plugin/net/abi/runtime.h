// SPDX-License-Identifier: Apache-2.0
// What every ABI adapter shares: the process-wide engine (created by the first init, kept alive
// by a reference count, destroyed when the library is unloaded or the last v11+ context is
// finalized), the per-communicator context of v11+, and the conversion of a Status into NCCL's
// result code at the ABI edge (the finding's one line is logged there, once).
#pragma once

#include <atomic>
#include <cstdint>

#include "plugin/net/transport.h"
#include "railscope/nccl/common.h"

namespace railscope::net::abi {

// The context a v11+ init hands NCCL.
struct Context {
  CommConfig config;
};

// Installs the logger, creates the engine if needed and takes a reference. For v11+ pass ctx:
// it receives a new Context (nullptr on failure, so a later finalize(ctx) is harmless).
ncclResult_t init(const char* fn, ncclDebugLogger_t logger, ncclProfilerCallback_t profiler,
                  const CommConfig& config, Context** ctx);
// Drops the reference taken by a v11+ init; null (failed init) is accepted.
ncclResult_t finalize(Context* ctx);

// The engine the first init created, until the last finalize (or the library's unload) destroys it.
// Constant-initialized: no constructor runs at load.
extern constinit std::atomic<Engine*> current_engine;
Engine* no_engine(const char* fn);  // logs that fn came before a successful init; nullptr

// The engine, or nullptr (and a logged error) when init has not succeeded. Inline: NCCL's proxy
// calls test() in a loop, and this is the whole cost of the ABI layer on that path.
inline Engine* engine(const char* fn) {
  Engine* e = current_engine.load(std::memory_order_acquire);
  return e != nullptr ? e : no_engine(fn);
}

// Logs a failure's one line (WARN, net::report_failure) and returns its code; success passes through
// silently.
inline ncclResult_t report(const char* fn, const Status& status) { return reported_result(fn, status); }

// Common argument check: logs internal.bad_argument naming the function and returns
// ncclInternalError (NCCL misused the API).
ncclResult_t bad_argument(const char* fn, const char* what);
// NCCL's function fn on a comm without the data-path function it needs (`function`: "sender",
// "receiver", "flusher"; transport.h): logs internal.no_data_path, returns ncclInternalError.
ncclResult_t no_data_path(const char* fn, const char* function);
// A message above kMaxMessageBytes: ncclInvalidArgument, logged with both sizes.
ncclResult_t message_too_large(const char* fn, size_t size);

// The config a context carries, or the default when ctx is null.
CommConfig config_of(void* ctx);

}  // namespace railscope::net::abi
