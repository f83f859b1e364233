// SPDX-License-Identifier: Apache-2.0
#include "net_api.h"

#include <sys/stat.h>

#include <cstring>
#include <type_traits>

#include "railscope/nccl/net.h"

#ifndef RAILSCOPE_BUILT_NET_PLUGIN
#define RAILSCOPE_BUILT_NET_PLUGIN ""
#endif

namespace railscope::netbench {

const char* result_name(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    case ncclNumResults: break;
  }
  return "unknown ncclResult_t";
}

namespace {

template <class Table>
constexpr int kVersion = 0;
template <>
constexpr int kVersion<ncclNet_v8_t> = 8;
template <>
constexpr int kVersion<ncclNet_v9_t> = 9;
template <>
constexpr int kVersion<ncclNet_v10_t> = 10;
template <>
constexpr int kVersion<ncclNet_v11_t> = 11;
template <>
constexpr int kVersion<ncclNet_v12_t> = 12;

// One adapter per ABI version; `if constexpr` covers the few calls whose shape changed.
template <class Table>
class NetApiOf final : public NetApi {
 public:
  explicit NetApiOf(const Table* t) : t_(t) {}
  static constexpr int V = kVersion<Table>;

  int version() const override { return V; }
  std::string name() const override { return t_->name ? t_->name : "(unnamed)"; }

  ncclResult_t init(ncclDebugLogger_t logger) override {
    if constexpr (V >= 11) {
      ncclNetCommConfig_v11_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
      return t_->init(&ctx_, 0x6e657462656e6368ULL /* "netbench" */, &config, logger, &no_profiler);
    } else if constexpr (V == 10) {
      return t_->init(logger, &no_profiler);
    } else {
      return t_->init(logger);
    }
  }
  ncclResult_t finalize() override {
    if constexpr (V >= 11) {
      if (t_->finalize == nullptr) return ncclSuccess;
      return t_->finalize(ctx_);
    }
    return ncclSuccess;
  }
  ncclResult_t devices(int* n) override { return t_->devices(n); }
  ncclResult_t properties(int dev, DeviceInfo* out) override {
    std::remove_pointer_t<decltype(get_props_arg())> p;
    std::memset(&p, 0, sizeof p);
    const ncclResult_t r = t_->getProperties(dev, &p);
    if (r != ncclSuccess) return r;
    out->name = p.name ? p.name : "";
    out->pci_path = p.pciPath ? p.pciPath : "";
    out->guid = p.guid;
    out->ptr_support = p.ptrSupport;
    out->speed_mbps = p.speed;
    out->port = p.port;
    out->latency_us = p.latency;
    out->max_comms = p.maxComms;
    out->max_recvs = p.maxRecvs;
    return r;
  }
  ncclResult_t listen(int dev, void* handle, void** lc) override {
    if constexpr (V >= 11)
      return t_->listen(ctx_, dev, handle, lc);
    else
      return t_->listen(dev, handle, lc);
  }
  ncclResult_t connect(int dev, void* handle, void** sc) override {
    ncclNetDeviceHandle_v7_t* dev_handle = nullptr;  // a host plugin leaves it untouched
    if constexpr (V >= 11) {
      return t_->connect(ctx_, dev, handle, sc, &dev_handle);
    } else if constexpr (V == 10) {
      ncclNetCommConfig_v10_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
      return t_->connect(dev, &config, handle, sc, &dev_handle);
    } else {
      return t_->connect(dev, handle, sc, &dev_handle);
    }
  }
  ncclResult_t accept(void* lc, void** rc) override {
    ncclNetDeviceHandle_v7_t* dev_handle = nullptr;
    return t_->accept(lc, rc, &dev_handle);
  }
  ncclResult_t reg_mr(void* comm, void* data, size_t size, void** mh) override {
    return t_->regMr(comm, data, size, NCCL_PTR_HOST, mh);
  }
  ncclResult_t dereg_mr(void* comm, void* mh) override { return t_->deregMr(comm, mh); }
  ncclResult_t isend(void* sc, void* data, size_t size, int tag, void* mh, void** req) override {
    if constexpr (V >= 10)
      return t_->isend(sc, data, size, tag, mh, nullptr, req);
    else if constexpr (V == 9)
      return t_->isend(sc, data, size, tag, mh, req);
    else
      return t_->isend(sc, data, static_cast<int>(size), tag, mh, req);
  }
  ncclResult_t irecv(void* rc, int n, void** data, size_t* sizes, int* tags, void** mhs,
                     void** req) override {
    if constexpr (V >= 10) {
      void* phandles[NCCL_NET_MAX_REQUESTS] = {};
      return t_->irecv(rc, n, data, sizes, tags, mhs, phandles, req);
    } else if constexpr (V == 9) {
      return t_->irecv(rc, n, data, sizes, tags, mhs, req);
    } else {
      int isizes[NCCL_NET_MAX_REQUESTS];
      for (int i = 0; i < n && i < NCCL_NET_MAX_REQUESTS; ++i) isizes[i] = static_cast<int>(sizes[i]);
      return t_->irecv(rc, n, data, isizes, tags, mhs, req);
    }
  }
  ncclResult_t test(void* req, int* done, int* sizes) override { return t_->test(req, done, sizes); }
  ncclResult_t close_send(void* c) override { return t_->closeSend(c); }
  ncclResult_t close_recv(void* c) override { return t_->closeRecv(c); }
  ncclResult_t close_listen(void* c) override { return t_->closeListen(c); }

 private:
  static auto get_props_arg() {
    if constexpr (V == 12)
      return static_cast<ncclNetProperties_v12_t*>(nullptr);
    else if constexpr (V == 11)
      return static_cast<ncclNetProperties_v11_t*>(nullptr);
    else if constexpr (V >= 9)
      return static_cast<ncclNetProperties_v9_t*>(nullptr);
    else
      return static_cast<ncclNetProperties_v8_t*>(nullptr);
  }
  static ncclResult_t no_profiler(void** eh, int, void*, int64_t, void*) {
    if (eh) *eh = nullptr;
    return ncclSuccess;
  }
  const Table* t_;
  void* ctx_ = nullptr;
};

bool file_exists(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

}  // namespace

std::string default_plugin_path() {
  const std::string built = RAILSCOPE_BUILT_NET_PLUGIN;
  if (file_exists(built)) return built;
  return "railscope";
}

OpenedPlugin open_plugin(const std::string& plugin, std::optional<int> only_version) {
  OpenedPlugin out;
  const std::string name = plugin.empty() ? default_plugin_path() : plugin;
  out.library =
      pluginload::load(pluginload::PluginKind::Net, name, pluginload::NcclRelease::V2_30, only_version);
  if (!out.library) return out;
  void* t = out.library.table;
  switch (out.library.version) {
    case 12: out.api = std::make_unique<NetApiOf<ncclNet_v12_t>>(static_cast<ncclNet_v12_t*>(t)); break;
    case 11: out.api = std::make_unique<NetApiOf<ncclNet_v11_t>>(static_cast<ncclNet_v11_t*>(t)); break;
    case 10: out.api = std::make_unique<NetApiOf<ncclNet_v10_t>>(static_cast<ncclNet_v10_t*>(t)); break;
    case 9: out.api = std::make_unique<NetApiOf<ncclNet_v9_t>>(static_cast<ncclNet_v9_t*>(t)); break;
    case 8: out.api = std::make_unique<NetApiOf<ncclNet_v8_t>>(static_cast<ncclNet_v8_t*>(t)); break;
    default:
      out.library.error = out.library.symbol + ": ABI version " + std::to_string(out.library.version) +
                          " is older than netbench supports (v8)";
  }
  return out;
}

int find_device(NetApi& api, const std::string& dev) {
  int n = 0;
  if (api.devices(&n) != ncclSuccess) return -1;
  for (int i = 0; i < n; ++i) {
    DeviceInfo info;
    if (api.properties(i, &info) == ncclSuccess && info.name == dev) return i;
  }
  if (!dev.empty() && dev.find_first_not_of("0123456789") == std::string::npos) {
    const long idx = std::strtol(dev.c_str(), nullptr, 10);
    if (idx >= 0 && idx < n) return static_cast<int>(idx);
  }
  return -1;
}

}  // namespace railscope::netbench
