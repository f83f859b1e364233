// SPDX-License-Identifier: Apache-2.0
// Opens a plugin library the way NCCL 2.28.9 / 2.30 does (src/plugin/plugin_open.cc and the per-kind
// loaders): the same library-name rules for NCCL_{NET,TUNER,PROFILER}_PLUGIN, the same dlopen flags
// and the newest-symbol-first lookup. Used by the ABI test harness and by CLI tools (netbench) that
// must drive a plugin exactly as NCCL would, never by linking it.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace railscope::pluginload {

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

}  // namespace railscope::pluginload
