// SPDX-License-Identifier: Apache-2.0
#include "railscope/core/log.h"

#include <strings.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace railscope::log {
namespace {

std::atomic<ncclDebugLogger_t> g_logger{nullptr};
std::atomic<Sink> g_sink{nullptr};

// Level threshold for stderr output when NCCL gave no logger, read once from NCCL_DEBUG.
int stderr_threshold() {
  static const int threshold = [] {
    const char* v = std::getenv("NCCL_DEBUG");
    if (v == nullptr) return static_cast<int>(NCCL_LOG_WARN);
    if (strcasecmp(v, "VERSION") == 0) return static_cast<int>(NCCL_LOG_VERSION);
    if (strcasecmp(v, "INFO") == 0) return static_cast<int>(NCCL_LOG_INFO);
    if (strcasecmp(v, "TRACE") == 0) return static_cast<int>(NCCL_LOG_TRACE);
    if (strcasecmp(v, "NONE") == 0) return static_cast<int>(NCCL_LOG_NONE);
    return static_cast<int>(NCCL_LOG_WARN);
  }();
  return threshold;
}

std::mutex g_stderr_mutex;

}  // namespace

void set_nccl_logger(ncclDebugLogger_t logger) { g_logger.store(logger, std::memory_order_release); }
ncclDebugLogger_t nccl_logger() { return g_logger.load(std::memory_order_acquire); }
void set_extra_sink(Sink sink) { g_sink.store(sink, std::memory_order_release); }

bool enabled(Level level) {
  // NCCL's logger filters by itself; it is cheap to hand it everything but TRACE.
  if (g_sink.load(std::memory_order_relaxed) != nullptr) return true;
  if (nccl_logger() != nullptr) return level != Level::Trace || stderr_threshold() >= NCCL_LOG_TRACE;
  return static_cast<int>(level) <= stderr_threshold();
}

void emit(Level level, unsigned long subsys, const char* file, int line, std::string_view message) {
  if (Sink sink = g_sink.load(std::memory_order_acquire)) sink(level, message);
  if (ncclDebugLogger_t logger = nccl_logger()) {
    const std::string text(message);
    logger(static_cast<ncclDebugLogLevel>(level), subsys, file, line, "railscope: %s", text.c_str());
    return;
  }
  if (static_cast<int>(level) > stderr_threshold()) return;
  const char* tag = level == Level::Warn ? "WARN" : level == Level::Info ? "INFO" : "TRACE";
  std::lock_guard lock(g_stderr_mutex);
  std::fprintf(stderr, "railscope %s %.*s\n", tag, static_cast<int>(message.size()), message.data());
}

}  // namespace railscope::log
