// SPDX-License-Identifier: Apache-2.0
// doctor's view of the NCCL library (nccl_library.h).
#include "nccl_library.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

namespace railscope::doctor {

std::string NcclLibrary::version() const {
  if (version_code <= 0) return "";
  return fmt::format("{}.{}.{}", version_code / 10000, version_code / 100 % 100, version_code % 100);
}

NcclLibrary find_nccl_library() {
  NcclLibrary lib;
  // RTLD_LAZY: only ncclGetVersion is called, and a missing CUDA driver must not stop the lookup.
  void* h = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    lib.error = e ? e : "libnccl.so.2 not found";
    return lib;
  }
  lib.found = true;
  if (link_map* map = nullptr; dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name)
    lib.path = map->l_name;
  using GetVersion = int (*)(int*);
  auto get = reinterpret_cast<GetVersion>(dlsym(h, "ncclGetVersion"));
  int code = 0;
  if (!get)
    lib.error = "no ncclGetVersion in " + lib.path;
  else if (get(&code) != 0 || code <= 0)
    lib.error = "ncclGetVersion failed";
  else
    lib.version_code = code;
  dlclose(h);
  return lib;
}

bool nccl_needs_net_plugin_ref_count(int version_code) {
  return version_code >= 22800 && version_code < 23000;
}

}  // namespace railscope::doctor
