// SPDX-License-Identifier: Apache-2.0
// Argument conversion shared by the per-version ABI files (net_v8.cpp … net_v12.cpp). Each function
// here turns NCCL's C arguments into a call of the engine (control path) or of the comm's or
// request's own function (data path: transport.h), and a Status back into ncclResult_t; no transport
// logic lives here. Templates cover what differs between versions only in types
// (int vs size_t sizes, property struct layouts).
#pragma once

#include <cstring>
#include <type_traits>

#include "plugin/net/abi/recv_buffers.h"
#include "plugin/net/abi/runtime.h"
#include "plugin/net/transport.h"
#include "railscope/nccl/net.h"

namespace railscope::net::abi {

inline HandleBytes handle_bytes(void* handle) {
  return HandleBytes(static_cast<std::byte*>(handle), kHandleSize);
}

inline ncclResult_t devices(int* ndev) {
  if (ndev == nullptr) return bad_argument("devices", "a null ndev");
  *ndev = 0;
  Engine* e = engine("devices");
  if (e == nullptr) return ncclInternalError;
  return report("devices", e->devices(ndev));
}

template <class Props>
ncclResult_t get_properties(int dev, Props* props) {
  if (props == nullptr) return bad_argument("getProperties", "a null props");
  Engine* e = engine("getProperties");
  if (e == nullptr) return ncclInternalError;
  DeviceProps d;
  if (Status st = e->properties(dev, &d); !st.ok()) return report("getProperties", st);
  std::memset(static_cast<void*>(props), 0, sizeof(Props));
  props->name = const_cast<char*>(d.name);
  props->pciPath = const_cast<char*>(d.pci_path);
  props->guid = d.guid;
  props->ptrSupport = d.ptr_support;
  props->regIsGlobal = d.reg_is_global;
  props->speed = d.speed_mbps;
  props->port = d.port;
  props->latency = d.latency_us;
  props->maxComms = d.max_comms;
  props->maxRecvs = d.max_recvs;
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
  if constexpr (requires { props->forceFlush; }) props->forceFlush = d.force_flush;
  if constexpr (requires { props->vProps; }) {
    constexpr size_t cap = sizeof(props->vProps.devs) / sizeof(props->vProps.devs[0]);
    size_t n = d.vdevs.size() < cap ? d.vdevs.size() : cap;
    props->vProps.ndevs = static_cast<int>(n);
    for (size_t i = 0; i < n; ++i) props->vProps.devs[i] = d.vdevs[i];
    props->maxP2pBytes = d.max_p2p_bytes;
    props->maxCollBytes = d.max_coll_bytes;
  }
  if constexpr (requires { props->maxMultiRequestSize; })
    props->maxMultiRequestSize = d.max_multi_request_size;
  if constexpr (requires { props->railId; }) {
    props->railId = static_cast<int16_t>(d.rail_id);
    props->planeId = static_cast<int16_t>(d.plane_id);
  }
  return ncclSuccess;
}

inline ncclResult_t listen(int dev, const CommConfig* config, void* handle, void** listen_comm) {
  if (handle == nullptr || listen_comm == nullptr) return bad_argument("listen", "a null pointer");
  *listen_comm = nullptr;
  Engine* e = engine("listen");
  if (e == nullptr) return ncclInternalError;
  ListenComm* l = nullptr;
  if (Status st = e->listen(dev, config, handle_bytes(handle), &l); !st.ok()) return report("listen", st);
  *listen_comm = l;
  return ncclSuccess;
}

// A host plugin leaves *devComm untouched (NCCL reads a non-null one as device offload).
inline ncclResult_t connect(int dev, const CommConfig& config, void* handle, void** send_comm) {
  if (handle == nullptr || send_comm == nullptr) return bad_argument("connect", "a null pointer");
  *send_comm = nullptr;
  Engine* e = engine("connect");
  if (e == nullptr) return ncclInternalError;
  SendComm* s = nullptr;
  if (Status st = e->connect(dev, config, handle_bytes(handle), &s); !st.ok()) return report("connect", st);
  *send_comm = s;
  return ncclSuccess;
}

inline ncclResult_t accept(void* listen_comm, void** recv_comm, ncclNetDeviceHandle_v7_t** /*devComm*/) {
  if (listen_comm == nullptr || recv_comm == nullptr) return bad_argument("accept", "a null pointer");
  *recv_comm = nullptr;
  Engine* e = engine("accept");
  if (e == nullptr) return ncclInternalError;
  RecvComm* r = nullptr;
  if (Status st = e->accept(static_cast<ListenComm*>(listen_comm), &r); !st.ok()) return report("accept", st);
  *recv_comm = r;
  return ncclSuccess;
}

inline ncclResult_t reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
  if (comm == nullptr || mhandle == nullptr) return bad_argument("regMr", "a null pointer");
  *mhandle = nullptr;
  Engine* e = engine("regMr");
  if (e == nullptr) return ncclInternalError;
  MemHandle* m = nullptr;
  if (Status st = e->reg_mr(static_cast<Comm*>(comm), data, size, type, &m); !st.ok())
    return report("regMr", st);
  *mhandle = m;
  return ncclSuccess;
}

inline ncclResult_t reg_mr_dmabuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                                  void** mhandle) {
  if (comm == nullptr || mhandle == nullptr) return bad_argument("regMrDmaBuf", "a null pointer");
  *mhandle = nullptr;
  Engine* e = engine("regMrDmaBuf");
  if (e == nullptr) return ncclInternalError;
  MemHandle* m = nullptr;
  if (Status st = e->reg_mr_dmabuf(static_cast<Comm*>(comm), data, size, type, offset, fd, &m); !st.ok())
    return report("regMrDmaBuf", st);
  *mhandle = m;
  return ncclSuccess;
}

inline ncclResult_t dereg_mr(void* comm, void* mhandle) {
  if (comm == nullptr) return bad_argument("deregMr", "a null comm");
  if (mhandle == nullptr) return ncclSuccess;
  Engine* e = engine("deregMr");
  if (e == nullptr) return ncclInternalError;
  return report("deregMr", e->dereg_mr(static_cast<Comm*>(comm), static_cast<MemHandle*>(mhandle)));
}

template <class Size>
ncclResult_t isend(void* send_comm, void* data, Size size, int tag, void* mhandle, void* phandle,
                   void** request) {
  if (send_comm == nullptr || request == nullptr) return bad_argument("isend", "a null pointer");
  *request = nullptr;
  if constexpr (std::is_signed_v<Size>)
    if (size < 0) return bad_argument("isend", "a negative size");
  if (static_cast<size_t>(size) > kMaxMessageBytes)
    return message_too_large("isend", static_cast<size_t>(size));
  auto* comm = static_cast<SendComm*>(send_comm);
  if (comm->sender == nullptr) [[unlikely]]
    return no_data_path("isend", "sender");
  Request* r = nullptr;
  const ncclResult_t rc =
      comm->sender(comm, data, static_cast<size_t>(size), tag, static_cast<MemHandle*>(mhandle), phandle, &r);
  *request = r;
  return rc;
}

template <class Size>
ncclResult_t irecv(void* recv_comm, int n, void** data, Size* sizes, int* tags, void** mhandles,
                   void** phandles, void** request) {
  if (recv_comm == nullptr || request == nullptr) return bad_argument("irecv", "a null pointer");
  *request = nullptr;  // also clears NCCL's optional-completion hint; we always complete
  if (n < 1 || n > kMaxRecvs) return bad_argument("irecv", "n outside 1..maxRecvs");
  if (data == nullptr || sizes == nullptr || tags == nullptr || mhandles == nullptr)
    return bad_argument("irecv", "a null array");
  RecvBuffers bufs;  // only the first n are filled
  for (int i = 0; i < n; ++i) {
    if constexpr (std::is_signed_v<Size>)
      if (sizes[i] < 0) return bad_argument("irecv", "a negative size");
    bufs.set(i,
             RecvBuffer{data[i], static_cast<size_t>(sizes[i]), tags[i], static_cast<MemHandle*>(mhandles[i]),
                        phandles != nullptr ? phandles[i] : nullptr});
  }
  auto* comm = static_cast<RecvComm*>(recv_comm);
  if (comm->receiver == nullptr) [[unlikely]]
    return no_data_path("irecv", "receiver");
  Request* r = nullptr;
  const ncclResult_t rc = comm->receiver(comm, bufs.first(n), &r);
  *request = r;
  return rc;
}

inline ncclResult_t iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles, void** request) {
  if (recv_comm == nullptr || request == nullptr) return bad_argument("iflush", "a null pointer");
  *request = nullptr;
  if (n < 0 || n > kMaxRecvs) return bad_argument("iflush", "n outside 0..maxRecvs");
  if (n > 0 && (data == nullptr || sizes == nullptr || mhandles == nullptr))
    return bad_argument("iflush", "a null array");
  RecvBuffers bufs;  // only the first n are filled
  for (int i = 0; i < n; ++i)
    bufs.set(i, RecvBuffer{data[i], sizes[i] > 0 ? static_cast<size_t>(sizes[i]) : 0, 0,
                           static_cast<MemHandle*>(mhandles[i]), nullptr});
  auto* comm = static_cast<RecvComm*>(recv_comm);
  if (comm->flusher == nullptr) [[unlikely]]
    return no_data_path("iflush", "flusher");
  Request* r = nullptr;
  const ncclResult_t rc = comm->flusher(comm, bufs.first(n), &r);
  *request = r;
  return rc;
}

// NCCL's proxy thread calls test() in a loop: a tail call into the request's tester (transport.h),
// which its engine set and which logs its own failure; a request exists only while its engine does.
inline ncclResult_t test(void* request, int* done, int* sizes) {
  if (request == nullptr || done == nullptr) return bad_argument("test", "a null pointer");
  *done = 0;
  return net::test(static_cast<Request*>(request), done, sizes);
}

inline ncclResult_t close_send(void* comm) {
  if (comm == nullptr) return ncclSuccess;
  Engine* e = engine("closeSend");
  if (e == nullptr) return ncclInternalError;
  return report("closeSend", e->close_send(static_cast<SendComm*>(comm)));
}

inline ncclResult_t close_recv(void* comm) {
  if (comm == nullptr) return ncclSuccess;
  Engine* e = engine("closeRecv");
  if (e == nullptr) return ncclInternalError;
  return report("closeRecv", e->close_recv(static_cast<RecvComm*>(comm)));
}

inline ncclResult_t close_listen(void* comm) {
  if (comm == nullptr) return ncclSuccess;
  Engine* e = engine("closeListen");
  if (e == nullptr) return ncclInternalError;
  return report("closeListen", e->close_listen(static_cast<ListenComm*>(comm)));
}

// Every engine releases a request in the test() that reports it done (transport.h Request): nothing
// is left for irecvConsumed to release, on any comm.
inline ncclResult_t irecv_consumed(void* recv_comm, int /*n*/, void* /*request*/) {
  if (recv_comm == nullptr) return bad_argument("irecvConsumed", "a null comm");
  return ncclSuccess;
}

template <class VProps>
ncclResult_t make_vdevice(int* d, VProps* props) {
  if (d == nullptr || props == nullptr) return bad_argument("makeVDevice", "a null pointer");
  constexpr int cap = static_cast<int>(sizeof(props->devs) / sizeof(props->devs[0]));
  if (props->ndevs < 1 || props->ndevs > cap) return bad_argument("makeVDevice", "ndevs out of range");
  Engine* e = engine("makeVDevice");
  if (e == nullptr) return ncclInternalError;
  return report("makeVDevice",
                e->make_vdevice(std::span<const int>(props->devs, static_cast<size_t>(props->ndevs)), d));
}

template <class Attr>
ncclResult_t set_net_attr(void* /*ctx*/, Attr* attr) {
  if (attr == nullptr) return ncclSuccess;
  Engine* e = engine("setNetAttr");
  if (e == nullptr) return ncclInternalError;
  NetAttr a;
  a.send = FlowAttr{attr->sendCommAttr.maxConcurrentPeers, attr->sendCommAttr.minConcurrentPeers,
                    attr->sendCommAttr.maxFlowsPerPeer, attr->sendCommAttr.minFlowsPerPeer};
  a.recv = FlowAttr{attr->recvCommAttr.maxConcurrentPeers, attr->recvCommAttr.minConcurrentPeers,
                    attr->recvCommAttr.maxFlowsPerPeer, attr->recvCommAttr.minFlowsPerPeer};
  a.op = attr->op;
  a.algo = attr->algo;
  a.proto = attr->proto;
  return report("setNetAttr", e->set_net_attr(a));
}

}  // namespace railscope::net::abi
