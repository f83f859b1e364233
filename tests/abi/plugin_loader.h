// SPDX-License-Identifier: Apache-2.0
// The ABI test harness: loads plugins exactly the way NCCL 2.28.9 / 2.30 does (lib/pluginload: the
// same library-name rules for NCCL_{NET,TUNER,PROFILER}_PLUGIN, dlopen flags, and the
// newest-symbol-first lookup). Every ABI test drives the plugins through this, never by linking them.
#pragma once

#include <cstdarg>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "railscope/nccl/common.h"
#include "railscope/pluginload/loader.h"

namespace railscope::abi_test {

// The loader itself lives in lib/pluginload (shared with the CLI); the harness adds the paths of
// the plugins built in this tree and a capturing logger.
using pluginload::candidate_names;
using pluginload::candidate_symbols;
using pluginload::load;
using pluginload::LoadedPlugin;
using pluginload::NcclRelease;
using pluginload::PluginKind;

// Absolute path of a plugin built in this tree (set by CMake through RAILSCOPE_PLUGIN_DIR_*).
std::string built_plugin_path(PluginKind kind);

// A logger with NCCL's signature that records every line; tests assert on the captured text.
struct CapturedLog {
  struct Line {
    ncclDebugLogLevel level;
    unsigned long flags;
    std::string text;
  };
  static void logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                     const char* fmt, ...) __attribute__((format(printf, 5, 6)));
  static std::vector<Line> lines();
  static void clear();
  static bool contains(const std::string& needle);
  static void set_echo(bool echo);  // also print to stderr (debugging)
};

}  // namespace railscope::abi_test
