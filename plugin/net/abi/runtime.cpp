// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/abi/runtime.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <new>

#include "plugin/net/engine_factory.h"
#include "railscope/core/log.h"

namespace railscope::net::abi {
namespace {

// Function-local static: built on first use, destroyed when the library is unloaded (which also
// stops any engine threads before their code goes away).
// The engine it owns is published in current_engine for the data path.
struct EngineHolder {
  std::mutex mutex;
  std::unique_ptr<Engine> engine;
  int refs = 0;

  ~EngineHolder() {
    current_engine.store(nullptr);
    engine.reset();
  }
};

EngineHolder& holder() {
  static EngineHolder h;
  return h;
}

}  // namespace

constinit std::atomic<Engine*> current_engine{nullptr};

ncclResult_t bad_argument(const char* fn, const char* what) {
  return report(fn, Status::fail(ncclInternalError, "internal.bad_argument",
                                 fmt::format("{} called with {}", fn, what)));
}

ncclResult_t no_data_path(const char* fn, const char* function) {
  return report(fn, Status::fail(ncclInternalError, "internal.no_data_path",
                                 fmt::format("{} on a comm without its {}: the engine handed the comm out "
                                             "before setting its data path, or the comm is not this plugin's",
                                             fn, function)));
}

ncclResult_t message_too_large(const char* fn, size_t size) {
  return report(fn, Status::fail(ncclInvalidArgument, "internal.bad_argument",
                                 fmt::format("{} of {} bytes: above maxP2pBytes ({} bytes), the most one "
                                             "message may carry",
                                             fn, size, kMaxMessageBytes)));
}

ncclResult_t init(const char* fn, ncclDebugLogger_t logger, ncclProfilerCallback_t profiler,
                  const CommConfig& config, Context** ctx) {
  if (ctx != nullptr) *ctx = nullptr;
  if (logger != nullptr) log::set_nccl_logger(logger);
  auto& h = holder();
  std::lock_guard lock(h.mutex);
  if (!h.engine) {
    Status st;
    InitArgs args;
    args.profiler = profiler;
    auto e = make_engine(args, &st);
    if (!e)
      return report(fn, st.ok() ? Status::fail(ncclSystemError, "internal.unknown_diagnosis",
                                               "no transport engine could be created")
                                : st);
    h.engine = std::move(e);
    current_engine.store(h.engine.get(), std::memory_order_release);
    RS_INFO(NCCL_INIT | NCCL_NET, "NET/railscope : using the {} engine", h.engine->name());
  }
  if (ctx != nullptr) {
    auto* c = new (std::nothrow) Context{config};
    if (c == nullptr)
      return report(fn, Status::fail(ncclSystemError, "internal.unknown_diagnosis", "out of memory"));
    *ctx = c;
  }
  ++h.refs;
  return ncclSuccess;
}

ncclResult_t finalize(Context* ctx) {
  if (ctx == nullptr) return ncclSuccess;  // init failed (NCCL 2.28.9 still calls finalize)
  delete ctx;
  auto& h = holder();
  std::lock_guard lock(h.mutex);
  if (h.refs > 0 && --h.refs == 0) {
    current_engine.store(nullptr);
    h.engine.reset();
  }
  return ncclSuccess;
}

Engine* no_engine(const char* fn) {
  report(fn, Status::fail(ncclInternalError, "internal.bad_argument",
                          fmt::format("{} called before a successful init", fn)));
  return nullptr;
}

CommConfig config_of(void* ctx) {
  if (ctx == nullptr) return {};
  return static_cast<Context*>(ctx)->config;
}

}  // namespace railscope::net::abi
