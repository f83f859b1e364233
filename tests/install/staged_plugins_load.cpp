// SPDX-License-Identifier: Apache-2.0
// Loads the three plugins of an installed tree through the ABI harness (lib/pluginload: NCCL's name
// rules, RTLD_NOW | RTLD_LOCAL, newest symbol first), the way NCCL 2.28.9 and 2.30 would with
// NCCL_<KIND>_PLUGIN=railscope and the tree's lib folder on LD_LIBRARY_PATH (set by the caller: the
// loader reads LD_LIBRARY_PATH once, at process start).
//   install_staged_plugins_load <lib dir the plugins must come from>
// Exit 0 when every plugin loads from that folder with the expected ABI symbol and names itself
// "railscope"; 1 otherwise, with one line per failure on stderr.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <tuple>

#include "abi/plugin_loader.h"

namespace {

using railscope::abi_test::load;
using railscope::abi_test::NcclRelease;
using railscope::abi_test::PluginKind;

struct Expected {
  PluginKind kind;
  const char* label;
  const char* file;
  int v2_28_9;  // the symbol version each release picks (README, docs/compatibility.md)
  int v2_30;
};

constexpr Expected kPlugins[] = {
    {PluginKind::Net, "net", "libnccl-net-railscope.so", 11, 12},
    {PluginKind::Tuner, "tuner", "libnccl-tuner-railscope.so", 5, 6},
    {PluginKind::Profiler, "profiler", "libnccl-profiler-railscope.so", 5, 6},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <lib dir>\n", argv[0]);
    return 2;
  }
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::canonical(argv[1], ec);
  if (ec) {
    std::fprintf(stderr, "%s: %s\n", argv[1], ec.message().c_str());
    return 1;
  }
  int failures = 0;
  for (const auto& e : kPlugins) {
    for (const auto& [release, version, release_name] :
         {std::tuple{NcclRelease::V2_28_9, e.v2_28_9, "2.28.9"},
          std::tuple{NcclRelease::V2_30, e.v2_30, "2.30"}}) {
      auto p = load(e.kind, std::string("railscope"), release);
      const std::string where = std::string(e.label) + " (NCCL " + release_name + ")";
      if (!p) {
        std::fprintf(stderr, "FAIL %s: not loaded: %s\n", where.c_str(), p.error.c_str());
        ++failures;
        continue;
      }
      const std::filesystem::path real = std::filesystem::canonical(p.real_path, ec);
      const bool from_dir = !ec && real.parent_path() == dir && real.filename() == e.file;
      // Every net, tuner and profiler table NCCL knows starts with `const char* name`.
      const char* name = *static_cast<const char* const*>(p.table);
      const bool named = name != nullptr && std::strcmp(name, "railscope") == 0;
      if (!from_dir || p.version != version || !named) {
        std::fprintf(stderr, "FAIL %s: opened %s from %s, symbol %s, name %s (want %s/%s, v%d, railscope)\n",
                     where.c_str(), p.opened_name.c_str(), p.real_path.c_str(), p.symbol.c_str(),
                     name ? name : "(null)", dir.c_str(), e.file, version);
        ++failures;
        continue;
      }
      std::printf("ok %-8s NCCL %-6s %s -> %s (%s)\n", e.label, release_name, p.opened_name.c_str(),
                  real.c_str(), p.symbol.c_str());
    }
  }
  return failures == 0 ? 0 : 1;
}
