// Loads a plugin exactly the way NCCL 2.28.9 / 2.30 does (src/plugin/plugin_open.cc and the per-kind
// loaders): the same library-name rules for NCCL_{NET,TUNER,PROFILER}_PLUGIN, dlopen flags, and the
// newest-symbol-first lookup. Every ABI test drives the plugins through this, never by linking them.
#pragma once

#include <cstdarg>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "railscope/nccl/common.h"

namespace railscope::abi_test {

enum class PluginKind { Net, Tuner, Profiler };

// Which NCCL release is being imitated: decides which symbol versions are looked up.
enum class NcclRelease { V2_28_9, V2_30 };

struct LoadedPlugin {
  void* handle = nullptr;
  std::string opened_name;         // the name dlopen accepted
  std::string real_path;           // dlinfo's answer
  std::string symbol;              // e.g. "ncclNetPlugin_v11"
  int version = 0;                 // 11
  void* table = nullptr;           // the struct of function pointers
  std::vector<std::string> tried;  // names dlopen was asked for, in order
  std::string error;               // why nothing was loaded

  LoadedPlugin() = default;
  LoadedPlugin(const LoadedPlugin&) = delete;
  LoadedPlugin& operator=(const LoadedPlugin&) = delete;
  LoadedPlugin(LoadedPlugin&& o) noexcept;
  LoadedPlugin& operator=(LoadedPlugin&& o) noexcept;
  ~LoadedPlugin();
  explicit operator bool() const { return table != nullptr; }
};

// The library names NCCL would try for a given env value (empty optional = variable unset).
// Returns an empty list for "none" (disabled).
std::vector<std::string> candidate_names(PluginKind kind, const std::optional<std::string>& env_value);

// Symbols looked up, newest first, for a kind and release (e.g. ncclNetPlugin_v11 ... _v6).
std::vector<std::pair<std::string, int>> candidate_symbols(PluginKind kind, NcclRelease release);

// Resolves and opens. If `only_version` is set, looks up just that version's symbol (used to
// exercise each exported adapter).
LoadedPlugin load(PluginKind kind, const std::optional<std::string>& env_value,
                  NcclRelease release = NcclRelease::V2_30, std::optional<int> only_version = {});

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
