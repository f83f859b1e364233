// SPDX-License-Identifier: Apache-2.0
#include "railscope/pluginload/loader.h"

#include <dlfcn.h>
#include <link.h>
#include <strings.h>

#include <cstring>
#include <utility>

namespace railscope::pluginload {

namespace {
const char* prefix(PluginKind kind) {
  switch (kind) {
    case PluginKind::Net: return "libnccl-net";
    case PluginKind::Tuner: return "libnccl-tuner";
    case PluginKind::Profiler: return "libnccl-profiler";
  }
  return "";
}
}  // namespace

LoadedPlugin::LoadedPlugin(LoadedPlugin&& o) noexcept { *this = std::move(o); }
LoadedPlugin& LoadedPlugin::operator=(LoadedPlugin&& o) noexcept {
  if (this != &o) {
    if (handle) dlclose(handle);
    handle = std::exchange(o.handle, nullptr);
    opened_name = std::move(o.opened_name);
    real_path = std::move(o.real_path);
    symbol = std::move(o.symbol);
    version = o.version;
    table = std::exchange(o.table, nullptr);
    tried = std::move(o.tried);
    error = std::move(o.error);
  }
  return *this;
}
LoadedPlugin::~LoadedPlugin() {
  if (handle) dlclose(handle);
}

std::vector<std::string> candidate_names(PluginKind kind, const std::optional<std::string>& env_value) {
  const std::string pre = prefix(kind);
  if (!env_value || env_value->empty()) return {pre + ".so"};
  const std::string& x = *env_value;
  if (strcasecmp(x.c_str(), "none") == 0) return {};
  std::vector<std::string> names{x};
  const bool has_slash = x.find('/') != std::string::npos;
  const bool lib_so = x.size() >= 6 && x.compare(0, 3, "lib") == 0 && x.compare(x.size() - 3, 3, ".so") == 0;
  if (!has_slash && !lib_so) names.push_back(pre + "-" + x + ".so");
  return names;
}

std::vector<std::pair<std::string, int>> candidate_symbols(PluginKind kind, NcclRelease release) {
  std::vector<std::pair<std::string, int>> out;
  auto range = [&](const char* base, int hi, int lo) {
    for (int v = hi; v >= lo; --v) out.emplace_back(std::string(base) + std::to_string(v), v);
  };
  const bool new_release = release == NcclRelease::V2_30;
  switch (kind) {
    case PluginKind::Net: range("ncclNetPlugin_v", new_release ? 12 : 11, 6); break;
    case PluginKind::Tuner: range("ncclTunerPlugin_v", new_release ? 6 : 5, 2); break;
    case PluginKind::Profiler: range("ncclProfiler_v", new_release ? 6 : 5, 1); break;
  }
  return out;
}

LoadedPlugin load(PluginKind kind, const std::optional<std::string>& env_value, NcclRelease release,
                  std::optional<int> only_version) {
  LoadedPlugin p;
  const auto names = candidate_names(kind, env_value);
  if (names.empty()) {
    p.error = "disabled (none)";
    return p;
  }
  for (const auto& name : names) {
    p.tried.push_back(name);
    // NCCL: STATIC_PLUGIN (any case-insensitive prefix of it) means the main program.
    const bool is_static = strncasecmp(name.c_str(), "STATIC_PLUGIN", name.size()) == 0;
    void* h = dlopen(is_static ? nullptr : name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      p.error += (p.error.empty() ? "" : "; ") + name + ": " + (e ? e : "?");
      continue;
    }
    p.handle = h;
    p.opened_name = name;
    struct link_map* lm = nullptr;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm != nullptr && lm->l_name != nullptr)
      p.real_path = lm->l_name;
    break;
  }
  if (p.handle == nullptr) return p;
  for (const auto& [sym, ver] : candidate_symbols(kind, release)) {
    if (only_version && *only_version != ver) continue;
    if (void* t = dlsym(p.handle, sym.c_str())) {
      p.table = t;
      p.symbol = sym;
      p.version = ver;
      return p;
    }
  }
  p.error = "no supported symbol in " + p.opened_name;
  return p;
}

}  // namespace railscope::pluginload
