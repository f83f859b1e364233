// SPDX-License-Identifier: Apache-2.0
// A net plugin driven through its ABI only, the way NCCL's core drives it: opened with NCCL's name
// rules (lib/pluginload), newest ABI version first (v12 ... v8), one calling convention for the rest
// of netbench whatever version the plugin exports. Results are NCCL's codes, unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "railscope/nccl/common.h"
#include "railscope/pluginload/loader.h"

namespace railscope::netbench {

constexpr size_t kHandleBytes = 128;  // NCCL_NET_HANDLE_MAXSIZE

struct DeviceInfo {
  std::string name;
  std::string pci_path;
  uint64_t guid = 0;
  int ptr_support = 0;
  int speed_mbps = 0;
  int port = 0;
  float latency_us = 0;
  int max_comms = 0;
  int max_recvs = 1;
};

const char* result_name(ncclResult_t r);

class NetApi {
 public:
  virtual ~NetApi() = default;
  virtual int version() const = 0;
  virtual std::string name() const = 0;

  // init: v11+ per "communicator" (ctx); older versions once per process.
  virtual ncclResult_t init(ncclDebugLogger_t logger) = 0;
  virtual ncclResult_t finalize() = 0;  // no-op before v11
  virtual ncclResult_t devices(int* n) = 0;
  virtual ncclResult_t properties(int dev, DeviceInfo* out) = 0;
  virtual ncclResult_t listen(int dev, void* handle, void** listen_comm) = 0;
  virtual ncclResult_t connect(int dev, void* handle, void** send_comm) = 0;
  virtual ncclResult_t accept(void* listen_comm, void** recv_comm) = 0;
  virtual ncclResult_t reg_mr(void* comm, void* data, size_t size, void** mhandle) = 0;  // host memory
  virtual ncclResult_t dereg_mr(void* comm, void* mhandle) = 0;
  virtual ncclResult_t isend(void* send_comm, void* data, size_t size, int tag, void* mhandle,
                             void** request) = 0;
  virtual ncclResult_t irecv(void* recv_comm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                             void** request) = 0;
  virtual ncclResult_t test(void* request, int* done, int* sizes) = 0;
  virtual ncclResult_t close_send(void* comm) = 0;
  virtual ncclResult_t close_recv(void* comm) = 0;
  virtual ncclResult_t close_listen(void* comm) = 0;
};

struct OpenedPlugin {
  pluginload::LoadedPlugin library;  // keeps the library open
  std::unique_ptr<NetApi> api;       // null when loading failed (library.error says why)
};

// `plugin`: a path or a name as NCCL_NET_PLUGIN takes it; empty = railscope's plugin next to the CLI
// (see default_plugin_path()). `only_version` restricts the lookup to one ABI version.
OpenedPlugin open_plugin(const std::string& plugin, std::optional<int> only_version = {});

// railscope's own net plugin: the one built with this CLI when it exists, else the name "railscope"
// (NCCL's rules: dlopen("railscope"), then libnccl-net-railscope.so from the loader's search path).
std::string default_plugin_path();

// Finds a device by name ("rxe0") or index ("1"); -1 if none.
int find_device(NetApi& api, const std::string& dev);

}  // namespace railscope::netbench
