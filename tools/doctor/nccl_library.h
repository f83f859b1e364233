// SPDX-License-Identifier: Apache-2.0
// Which NCCL this environment would load, and whether it needs NCCL_NET_PLUGIN_REF_COUNT: NCCL 2.28 and
// 2.29 start an external net plugin's reference count at 0 (NCCL_PARAM(NetPluginRefCount,
// "NET_PLUGIN_REF_COUNT", 0) in src/plugin/net.cc, 1 up to 2.27), unload it when the last communicator
// is destroyed and clear its name with it (memset in ncclNetPluginUnload), so the next communicator
// falls back to NCCL's own transport. NCCL 2.30 keeps the name ("preserve name, to be reused when
// reloading").
#pragma once

#include <string>

namespace railscope::doctor {

struct NcclLibrary {
  bool found = false;
  int version_code = 0;         // ncclGetVersion(): major * 10000 + minor * 100 + patch (NCCL ≥ 2.9)
  std::string path;             // the file the loader opened
  std::string error;            // why it was not found or not read
  std::string version() const;  // "2.28.9", "" when unknown
};

// dlopen("libnccl.so.2") as a training process linked against NCCL would find it (LD_LIBRARY_PATH,
// ld.so.cache), then ncclGetVersion. Nothing of NCCL is initialised.
NcclLibrary find_nccl_library();

// NCCL releases whose default initial reference count lets the net plugin be unloaded and forgotten.
bool nccl_needs_net_plugin_ref_count(int version_code);

}  // namespace railscope::doctor
