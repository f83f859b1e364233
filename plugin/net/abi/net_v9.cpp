// SPDX-License-Identifier: Apache-2.0
// ncclNetPlugin_v9: converts NCCL's v9 arguments to the Engine interface (abi/adapter.h), nothing else.
#include "plugin/net/abi/adapter.h"

namespace railscope::net {
namespace {

ncclResult_t init(ncclDebugLogger_t logger) { return abi::init("init", logger, nullptr, {}, nullptr); }
ncclResult_t get_properties(int dev, ncclNetProperties_v9_t* props) {
  return abi::get_properties(dev, props);
}
ncclResult_t listen(int dev, void* handle, void** listen_comm) {
  const CommConfig none;  // no communicator traffic class before v10
  return abi::listen(dev, &none, handle, listen_comm);
}
ncclResult_t connect(int dev, void* handle, void** send_comm, ncclNetDeviceHandle_v9_t** /*dev_comm*/) {
  return abi::connect(dev, {}, handle, send_comm);
}
ncclResult_t accept(void* listen_comm, void** recv_comm, ncclNetDeviceHandle_v9_t** dev_comm) {
  return abi::accept(listen_comm, recv_comm, dev_comm);
}
ncclResult_t isend(void* comm, void* data, size_t size, int tag, void* mhandle, void** request) {
  return abi::isend(comm, data, size, tag, mhandle, nullptr, request);
}
ncclResult_t irecv(void* comm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                   void** request) {
  return abi::irecv(comm, n, data, sizes, tags, mhandles, nullptr, request);
}
ncclResult_t make_vdevice(int* d, ncclNetVDeviceProps_v9_t* props) { return abi::make_vdevice(d, props); }

}  // namespace
}  // namespace railscope::net

extern "C" {
__attribute__((visibility("default"))) ncclNet_v9_t ncclNetPlugin_v9 = {
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
};
}  // extern "C"
