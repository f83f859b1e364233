// SPDX-License-Identifier: Apache-2.0
// doctor's `plugins` section: would NCCL load railscope's plugins in this environment? NCCL falls back
// to its built-in transport, tuner and no profiler when a plugin fails to load, saying so only at INFO
// level; this section opens each plugin as NCCL does (lib/pluginload: NCCL's name rules, dlopen with
// RTLD_NOW | RTLD_LOCAL, newest ABI symbol first) and turns the loader's error into a finding with a fix.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "railscope/core/diagnosis.h"
#include "railscope/node/env_hygiene.h"

namespace railscope::doctor::plugins {

// One plugin as NCCL would open it.
struct Probe {
  std::string kind;           // "net", "tuner", "profiler"
  std::string origin;         // "NCCL_NET_PLUGIN" (what NCCL will load) or "railscope_dir" (railscope's own)
  std::string requested;      // the variable's value, or the file looked for
  bool selected = false;      // the environment makes NCCL load exactly this (NCCL_<KIND>_PLUGIN set)
  bool expected = false;      // asked for by RAILSCOPE_PLUGIN_DIR: absence is worth a warning
  bool nccl_default = false;  // NCCL_NET_PLUGIN unset: what NCCL's default name (libnccl-net.so) gives
  bool found = false;         // a file was there to open (a loader error other than "not found")
  bool loaded = false;        // dlopen succeeded and an ABI symbol was found
  std::string path;           // the file the loader opened
  std::string symbol;         // e.g. "ncclNetPlugin_v12" (NCCL 2.30's lookup order)
  std::vector<std::string> tried;  // names given to dlopen, in NCCL's order
  std::string error;               // the loader's words (dlerror), or why no symbol was found
};

// Where railscope's own plugins are looked for: RAILSCOPE_PLUGIN_DIR, else the installed layout next
// to the running binary (<bin>/<bindir-to-libdir>, e.g. /usr/bin/../lib), else a build tree
// (<build>/tools/railscope → <build>/plugin/<kind>/). `origin` says which.
struct PluginDir {
  std::filesystem::path dir;  // empty for a build tree: each kind has its own folder
  std::string origin;         // "RAILSCOPE_PLUGIN_DIR", "installed", "build tree", "none"
  std::filesystem::path file_for(const std::string& kind, const std::filesystem::path& self_exe) const;
};
PluginDir find_plugin_dir(const node::EnvLookup& env, const std::filesystem::path& self_exe);

// Every probe: for each kind, the plugin NCCL_<KIND>_PLUGIN selects (when set and not "none"; for the net
// plugin when unset, NCCL's default libnccl-net.so, which some images ship), and railscope's own plugin
// from the plugin folder (when that is a different file).
std::vector<Probe> probe_all(const node::EnvLookup& env, const std::filesystem::path& self_exe);

// The finding for a probe that did not load (none when it loaded, or was absent without being asked
// for). A plugin the environment selects is an error (NCCL would silently run without it); railscope's
// own plugin that cannot load here, or is missing from RAILSCOPE_PLUGIN_DIR, is a warning.
std::vector<diag::Finding> findings_for(const Probe& p);

}  // namespace railscope::doctor::plugins
