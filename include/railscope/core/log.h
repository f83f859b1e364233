// SPDX-License-Identifier: Apache-2.0
// Logging for code that runs inside someone else's process (the plugins) and for the CLI.
// Messages go to NCCL's logger when NCCL gave us one; otherwise to stderr, filtered by NCCL_DEBUG
// (default WARN). Never to stdout.
#pragma once

#include <fmt/format.h>

#include <string_view>

#include "railscope/nccl/common.h"

namespace railscope::log {

enum class Level { Warn = NCCL_LOG_WARN, Info = NCCL_LOG_INFO, Trace = NCCL_LOG_TRACE };

// Installs NCCL's logger (thread-safe; the last non-null one wins). nullptr restores stderr output.
void set_nccl_logger(ncclDebugLogger_t logger);
ncclDebugLogger_t nccl_logger();

// True when a message at this level would be printed (cheap; lets callers skip formatting).
bool enabled(Level level);

void emit(Level level, unsigned long subsys, const char* file, int line, std::string_view message);

// A sink that receives every emitted line in addition to the normal destination (tests, CLI).
using Sink = void (*)(Level level, std::string_view message);
void set_extra_sink(Sink sink);

}  // namespace railscope::log

#define RS_LOG_(level, subsys, ...)                                                        \
  do {                                                                                     \
    if (::railscope::log::enabled(level))                                                  \
      ::railscope::log::emit(level, subsys, __FILE__, __LINE__, fmt::format(__VA_ARGS__)); \
  } while (0)
#define RS_WARN(...) RS_LOG_(::railscope::log::Level::Warn, NCCL_ALL, __VA_ARGS__)
#define RS_INFO(subsys, ...) RS_LOG_(::railscope::log::Level::Info, subsys, __VA_ARGS__)
#define RS_TRACE(subsys, ...) RS_LOG_(::railscope::log::Level::Trace, subsys, __VA_ARGS__)
