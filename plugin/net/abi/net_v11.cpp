// SPDX-License-Identifier: Apache-2.0
// ncclNetPlugin_v11: converts NCCL's v11 arguments to the Engine interface (abi/adapter.h), nothing else.
#include "plugin/net/abi/adapter.h"

namespace railscope::net {
namespace {

ncclResult_t init(void** ctx, uint64_t comm_id, ncclNetCommConfig_v11_t* config, ncclDebugLogger_t logger,
                  ncclProfilerCallback_t profiler) {
  if (ctx == nullptr) return abi::bad_argument("init", "a null ctx");
  CommConfig c;
  c.comm_id = comm_id;
  if (config != nullptr) c.traffic_class = config->trafficClass;
  abi::Context* context = nullptr;
  ncclResult_t rc = abi::init("init", logger, profiler, c, &context);
  *ctx = context;
  return rc;
}
ncclResult_t get_properties(int dev, ncclNetProperties_v11_t* props) {
  return abi::get_properties(dev, props);
}
ncclResult_t listen(void* ctx, int dev, void* handle, void** listen_comm) {
  const CommConfig config = abi::config_of(ctx);
  return abi::listen(dev, &config, handle, listen_comm);
}
ncclResult_t connect(void* ctx, int dev, void* handle, void** send_comm,
                     ncclNetDeviceHandle_v11_t** /*dev_comm*/) {
  return abi::connect(dev, abi::config_of(ctx), handle, send_comm);
}
ncclResult_t accept(void* listen_comm, void** recv_comm, ncclNetDeviceHandle_v11_t** dev_comm) {
  return abi::accept(listen_comm, recv_comm, dev_comm);
}
ncclResult_t isend(void* comm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                   void** request) {
  return abi::isend(comm, data, size, tag, mhandle, phandle, request);
}
ncclResult_t irecv(void* comm, int n, void** data, size_t* sizes, int* tags, void** mhandles, void** phandles,
                   void** request) {
  return abi::irecv(comm, n, data, sizes, tags, mhandles, phandles, request);
}
ncclResult_t make_vdevice(int* d, ncclNetVDeviceProps_v11_t* props) { return abi::make_vdevice(d, props); }
ncclResult_t finalize(void* ctx) { return abi::finalize(static_cast<abi::Context*>(ctx)); }
ncclResult_t set_net_attr(void* ctx, ncclNetAttr_v11_t* attr) { return abi::set_net_attr(ctx, attr); }

}  // namespace
}  // namespace railscope::net

extern "C" {
__attribute__((visibility("default"))) ncclNet_v11_t ncclNetPlugin_v11 = {
    "railscope",
    railscope::net::init,
    railscope::net::abi::devices,
    railscope::net::get_properties,
    railscope::net::listen,
    railscope::net::connect,
    railscope::net::accept,
    railscope::net::abi::reg_mr,
    railscope::net::abi::reg_mr_dmabuf,
    railscope::net::abi::dereg_mr,
    railscope::net::isend,
    railscope::net::irecv,
    railscope::net::abi::iflush,
    railscope::net::abi::test,
    railscope::net::abi::close_send,
    railscope::net::abi::close_recv,
    railscope::net::abi::close_listen,
    nullptr,  // getDeviceMr: device offload only
    railscope::net::abi::irecv_consumed,
    railscope::net::make_vdevice,
    railscope::net::finalize,
    railscope::net::set_net_attr,
};
}  // extern "C"
