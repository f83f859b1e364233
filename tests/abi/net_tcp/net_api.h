// SPDX-License-Identifier: Apache-2.0
// The net plugin's ABI, any version v8–v12, behind one small interface so the same test (and bench)
// code drives every version: the plugin is loaded with the harness exactly as NCCL loads it, and
// each call goes through that version's function table. Sizes are size_t here and converted to the
// version's types.
#pragma once

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "abi/plugin_loader.h"
#include "railscope/nccl/net.h"

namespace railscope::abi_test {

struct NetProps {
  std::string name, pci_path;
  int speed = 0, ptr_support = 0, max_recvs = 0, max_comms = 0;
  size_t max_p2p_bytes = 0;  // v9+
};

struct NetApi {
  LoadedPlugin plugin;
  int version = 0;
  void* ctx = nullptr;
  std::function<ncclResult_t()> init;
  std::function<ncclResult_t()> finalize;
  std::function<ncclResult_t(int*)> devices;
  std::function<ncclResult_t(int, NetProps*)> properties;
  std::function<ncclResult_t(int, void*, void**)> listen;
  std::function<ncclResult_t(int, void*, void**)> connect;
  std::function<ncclResult_t(void*, void**)> accept;
  std::function<ncclResult_t(void*, void*, size_t, void**)> reg_mr;
  std::function<ncclResult_t(void*, void*)> dereg_mr;
  std::function<ncclResult_t(void*, void*, size_t, int, void*, void**)> isend;
  // v10+: isend with NCCL's profiler parent handle (empty for v8/v9)
  std::function<ncclResult_t(void*, void*, size_t, int, void*, void*, void**)> isend_profiled;
  std::function<ncclResult_t(void*, int, void**, size_t*, int*, void**, void**)> irecv;
  std::function<ncclResult_t(void*, int*, int*)> test;
  std::function<ncclResult_t(void*, int, void**, int*, void**, void**)> iflush;
  std::function<ncclResult_t(void*, int, void*)> irecv_consumed;
  std::function<ncclResult_t(void*)> close_send, close_recv, close_listen;

  NetApi() = default;
  NetApi(const NetApi&) = delete;
  NetApi& operator=(const NetApi&) = delete;
  // NCCL finalizes every context it initialised when the communicator goes away; so does the harness,
  // so that a peer process that simply returns does not leak its v11+ context.
  ~NetApi() {
    if (ctx != nullptr && finalize) finalize();
  }
};

template <class Table, class Props>
void fill_common(NetApi* a, const Table* t) {
  a->devices = t->devices;
  a->properties = [t](int dev, NetProps* p) {
    Props raw{};
    ncclResult_t rc = t->getProperties(dev, &raw);
    if (rc == ncclSuccess) {
      p->name = raw.name != nullptr ? raw.name : "";
      p->pci_path = raw.pciPath != nullptr ? raw.pciPath : "";
      p->speed = raw.speed;
      p->ptr_support = raw.ptrSupport;
      p->max_recvs = raw.maxRecvs;
      p->max_comms = raw.maxComms;
      if constexpr (requires { raw.maxP2pBytes; }) p->max_p2p_bytes = raw.maxP2pBytes;
    }
    return rc;
  };
  a->accept = [t](void* l, void** r) {
    ncclNetDeviceHandle_v7_t* dev = nullptr;  // a host plugin leaves it null
    return t->accept(l, r, &dev);
  };
  a->reg_mr = [t](void* c, void* d, size_t n, void** m) { return t->regMr(c, d, n, NCCL_PTR_HOST, m); };
  a->dereg_mr = t->deregMr;
  a->test = t->test;
  a->iflush = t->iflush;
  a->irecv_consumed = t->irecvConsumed;
  a->close_send = t->closeSend;
  a->close_recv = t->closeRecv;
  a->close_listen = t->closeListen;
}

// Loads the built plugin's version v (8..12) and binds its table.
inline std::unique_ptr<NetApi> load_net_api(int v, ncclDebugLogger_t logger,
                                            ncclProfilerCallback_t profiler = nullptr) {
  auto a = std::make_unique<NetApi>();
  a->plugin = load(PluginKind::Net, built_plugin_path(PluginKind::Net), NcclRelease::V2_30, v);
  if (!a->plugin) return nullptr;
  a->version = v;
  NetApi* api = a.get();
  if (v == 8) {
    auto* t = static_cast<const ncclNet_v8_t*>(a->plugin.table);
    fill_common<ncclNet_v8_t, ncclNetProperties_v8_t>(api, t);
    api->init = [t, logger] { return t->init(logger); };
    api->finalize = [] { return ncclSuccess; };
    api->listen = t->listen;
    api->connect = [t](int d, void* h, void** s) { return t->connect(d, h, s, nullptr); };
    api->isend = [t](void* c, void* d, size_t n, int tag, void* m, void** r) {
      return t->isend(c, d, static_cast<int>(n), tag, m, r);
    };
    api->irecv = [t](void* c, int n, void** d, size_t* s, int* tags, void** m, void** r) {
      int sizes[8];
      for (int i = 0; i < n && i < 8; ++i) sizes[i] = static_cast<int>(s[i]);
      return t->irecv(c, n, d, sizes, tags, m, r);
    };
  } else if (v == 9) {
    auto* t = static_cast<const ncclNet_v9_t*>(a->plugin.table);
    fill_common<ncclNet_v9_t, ncclNetProperties_v9_t>(api, t);
    api->init = [t, logger] { return t->init(logger); };
    api->finalize = [] { return ncclSuccess; };
    api->listen = t->listen;
    api->connect = [t](int d, void* h, void** s) { return t->connect(d, h, s, nullptr); };
    api->isend = [t](void* c, void* d, size_t n, int tag, void* m, void** r) {
      return t->isend(c, d, n, tag, m, r);
    };
    api->irecv = [t](void* c, int n, void** d, size_t* s, int* tags, void** m, void** r) {
      return t->irecv(c, n, d, s, tags, m, r);
    };
  } else if (v == 10) {
    auto* t = static_cast<const ncclNet_v10_t*>(a->plugin.table);
    fill_common<ncclNet_v10_t, ncclNetProperties_v10_t>(api, t);
    api->init = [t, logger, profiler] { return t->init(logger, profiler); };
    api->isend_profiled = t->isend;
    api->finalize = [] { return ncclSuccess; };
    api->listen = t->listen;
    api->connect = [t](int d, void* h, void** s) {
      ncclNetCommConfig_v10_t config{-1};
      return t->connect(d, &config, h, s, nullptr);
    };
    api->isend = [t](void* c, void* d, size_t n, int tag, void* m, void** r) {
      return t->isend(c, d, n, tag, m, nullptr, r);
    };
    api->irecv = [t](void* c, int n, void** d, size_t* s, int* tags, void** m, void** r) {
      return t->irecv(c, n, d, s, tags, m, nullptr, r);
    };
  } else {
    // v11 and v12 differ here only in the property struct.
    auto bind_new = [api, logger, profiler](auto* t, auto props_tag) {
      using Table = std::remove_cv_t<std::remove_pointer_t<decltype(t)>>;
      fill_common<Table, decltype(props_tag)>(api, t);
      api->isend_profiled = t->isend;
      api->init = [t, api, logger, profiler] {
        ncclNetCommConfig_v11_t config{-1};
        return t->init(&api->ctx, 0x1234, &config, logger, profiler);
      };
      api->finalize = [t, api] {
        const ncclResult_t rc = t->finalize(api->ctx);
        api->ctx = nullptr;
        return rc;
      };
      api->listen = [t, api](int d, void* h, void** l) { return t->listen(api->ctx, d, h, l); };
      api->connect = [t, api](int d, void* h, void** s) { return t->connect(api->ctx, d, h, s, nullptr); };
      api->isend = [t](void* c, void* d, size_t n, int tag, void* m, void** r) {
        return t->isend(c, d, n, tag, m, nullptr, r);
      };
      api->irecv = [t](void* c, int n, void** d, size_t* s, int* tags, void** m, void** r) {
        return t->irecv(c, n, d, s, tags, m, nullptr, r);
      };
    };
    if (v == 11)
      bind_new(static_cast<const ncclNet_v11_t*>(a->plugin.table), ncclNetProperties_v11_t{});
    else
      bind_new(static_cast<const ncclNet_v12_t*>(a->plugin.table), ncclNetProperties_v12_t{});
  }
  return a;
}

// Connects to `handle` and accepts on `lcomm` in one thread, as NCCL's bootstrap does (both calls are
// non-blocking and may return a null comm until the other side progresses): the first error, or
// success once both comms exist or `timeout` passed (then one of them is still null).
inline ncclResult_t connect_and_accept(NetApi& api, int dev, void* handle, void* lcomm, void** scomm,
                                       void** rcomm, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while ((*scomm == nullptr || *rcomm == nullptr) && std::chrono::steady_clock::now() < deadline) {
    if (*scomm == nullptr) {
      if (const ncclResult_t rc = api.connect(dev, handle, scomm); rc != ncclSuccess) return rc;
    }
    if (*rcomm == nullptr) {
      if (const ncclResult_t rc = api.accept(lcomm, rcomm); rc != ncclSuccess) return rc;
    }
  }
  return ncclSuccess;
}

}  // namespace railscope::abi_test
