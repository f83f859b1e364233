// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/tcp/tcp_engine.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>

#include "plugin/net/common/pending_connects.h"
#include "plugin/net/common/random_id.h"
#include "plugin/net/tcp/recv_comm.h"
#include "plugin/net/tcp/send_comm.h"
#include "railscope/core/log.h"
#include "railscope/nccl/net.h"

namespace railscope::net::tcp {
namespace {

// TCP needs no registration: one shared, stateless handle stands for every buffer.
struct TcpMr : MemHandle {};
TcpMr& the_mr() {
  static TcpMr mr;
  return mr;
}

Status bad_handle(const std::string& why) {
  return Status::fail(
      ncclInvalidArgument, "peer.bad_handshake", fmt::format("invalid connection handle: {}", why),
      "Pass connect() the handle listen() produced on the peer, unmodified (all 128 bytes); run "
      "the same railscope build and RAILSCOPE_TRANSPORT on every node");
}

Status foreign(const char* what) {
  return Status::fail(ncclInternalError, "internal.bad_argument",
                      fmt::format("{} not made by the TCP engine", what));
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

}  // namespace

std::unique_ptr<TcpEngine> TcpEngine::create(const InitArgs& args, Status* status) {
  std::unique_ptr<TcpEngine> e(new TcpEngine());
  e->profiler_ = args.profiler;
  e->host_ = host_name();
  e->options_ = options_from_env();
  if (Status st = discover_interfaces(&e->interfaces_); !st.ok()) {
    *status = std::move(st);
    return nullptr;
  }
  std::string summary;
  for (size_t i = 0; i < e->interfaces_.size(); ++i) {
    const NetInterface& n = e->interfaces_[i];
    e->devices_.push_back(Device{static_cast<int>(i), n.ip.name});
    summary += fmt::format(" [{}]{}:{}", i, n.ip.name, address_text(n.ip));
  }
  if (e->options_.nthreads == 0)
    RS_INFO(
        NCCL_INIT | NCCL_NET,
        "NET/railscope : TCP engine using{}; {} sockets per connection moved by the calling (proxy) thread, "
        "no helper threads (NCCL_SOCKET_NTHREADS=0)",
        summary, e->options_.nsocks());
  else
    RS_INFO(NCCL_INIT | NCCL_NET,
            "NET/railscope : TCP engine using{}; {} threads x {} sockets per connection", summary,
            e->options_.nthreads, e->options_.nsocks_per_thread);
  return e;
}

Status TcpEngine::devices(int* ndev) {
  std::shared_lock lock(devices_mutex_);
  *ndev = static_cast<int>(devices_.size());
  return Status::success();
}

Status TcpEngine::local_end(int dev, LocalEnd* out, const NetInterface** iface) const {
  std::shared_lock lock(devices_mutex_);
  if (dev < 0 || static_cast<size_t>(dev) >= devices_.size())
    return Status::fail(ncclInvalidArgument, "internal.bad_argument",
                        fmt::format("device {} does not exist ({} devices)", dev, devices_.size()));
  const NetInterface& n = interfaces_[static_cast<size_t>(devices_[static_cast<size_t>(dev)].iface)];
  out->host = host_;
  out->dev = n.ip.name;
  out->addr = address_text(n.ip);
  out->mtu = n.mtu;
  out->options = options_;
  out->profiler = profiler_;
  if (iface != nullptr) *iface = &n;
  return Status::success();
}

Status TcpEngine::properties(int dev, DeviceProps* props) {
  std::shared_lock lock(devices_mutex_);
  if (dev < 0 || static_cast<size_t>(dev) >= devices_.size())
    return Status::fail(ncclInvalidArgument, "internal.bad_argument",
                        fmt::format("device {} does not exist ({} devices)", dev, devices_.size()));
  const Device& d = devices_[static_cast<size_t>(dev)];
  const NetInterface& n = interfaces_[static_cast<size_t>(d.iface)];
  props->name = d.name.c_str();
  props->pci_path = n.pci_path.empty() ? nullptr : n.pci_path.c_str();
  props->guid = static_cast<uint64_t>(d.iface);
  props->ptr_support = NCCL_PTR_HOST;
  props->reg_is_global = 0;
  props->force_flush = 0;
  props->speed_mbps = n.speed_mbps;
  props->port = 0;
  props->latency_us = 0.0f;
  props->max_comms = 65536;
  props->max_recvs = kMaxRecvs;
  props->vdevs = {d.iface};
  props->max_coll_bytes = size_t{512} << 20;
  props->max_multi_request_size = 1;
  return Status::success();
}

Status TcpEngine::listen(int dev, const CommConfig* /*config*/, HandleBytes handle, ListenComm** out) {
  LocalEnd local;
  const NetInterface* n = nullptr;
  if (Status st = local_end(dev, &local, &n); !st.ok()) return st;
  ListenHandle h;
  h.family = static_cast<uint8_t>(n->ip.family);
  h.addr = n->ip.addr;
  h.nonce = random_id();
  Fd fd;
  if (Status st = open_listener(SocketAddress{n->ip.family, n->ip.addr, 0}, &fd, &h.port); !st.ok())
    return st;
  encode_handle(h, handle);
  *out = new TcpListen(std::move(fd), h.nonce, std::move(local));
  return Status::success();
}

Status TcpEngine::connect(int dev, const CommConfig& /*config*/, HandleBytes handle, SendComm** out) {
  std::string why;
  auto h = decode_handle(handle, &why);
  if (!h) return bad_handle(why);
  auto make = [&](std::unique_ptr<TcpConnector>* conn, uint64_t* id) {
    LocalEnd local;
    if (Status st = local_end(dev, &local, nullptr); !st.ok()) return st;
    *id = random_id();
    *conn = std::make_unique<TcpConnector>(*h, std::move(local), *id);
    return (*conn)->start();
  };
  return pending_.step<TcpSendComm>({&store_connect_id, &bad_handle}, h->connect_id, handle, make, out,
                                    2 * std::chrono::seconds(options_.timeout_s));
}

Status TcpEngine::accept(ListenComm* listen, RecvComm** out) {
  auto* l = dynamic_cast<TcpListen*>(listen);
  if (l == nullptr) return foreign("listen comm");
  TcpRecvComm* comm = nullptr;
  if (Status st = l->accept(&comm); !st.ok()) return st;
  *out = comm;
  return Status::success();
}

Status TcpEngine::reg_mr(Comm* /*comm*/, void* /*data*/, size_t size, int type, MemHandle** out) {
  if (type != NCCL_PTR_HOST)
    return Status::fail(
        ncclInternalError, "internal.bad_argument",
        fmt::format("regMr of {} bytes of memory type {}: the TCP engine carries host memory only "
                    "(ptrSupport=NCCL_PTR_HOST)",
                    size, type));
  *out = &the_mr();
  return Status::success();
}

Status TcpEngine::reg_mr_dmabuf(Comm* /*comm*/, void* /*data*/, size_t size, int /*type*/,
                                uint64_t /*offset*/, int /*fd*/, MemHandle** /*out*/) {
  return Status::fail(ncclInvalidArgument, "gdr.dmabuf_unsupported",
                      fmt::format("regMrDmaBuf of {} bytes: the TCP engine carries host memory only", size));
}

Status TcpEngine::dereg_mr(Comm* /*comm*/, MemHandle* mr) {
  if (mr != &the_mr()) return foreign("memory handle");
  return Status::success();
}

Status TcpEngine::close_send(SendComm* comm) {
  auto* c = dynamic_cast<TcpSendComm*>(comm);
  if (c == nullptr) return foreign("send comm");
  c->emit_stats("send");
  delete c;
  return Status::success();
}

Status TcpEngine::close_recv(RecvComm* comm) {
  auto* c = dynamic_cast<TcpRecvComm*>(comm);
  if (c == nullptr) return foreign("receive comm");
  c->emit_stats("recv");
  delete c;
  return Status::success();
}

Status TcpEngine::close_listen(ListenComm* listen) {
  auto* l = dynamic_cast<TcpListen*>(listen);
  if (l == nullptr) return foreign("listen comm");
  delete l;
  return Status::success();
}

// A virtual device of one interface aliases it; the TCP engine does not stripe across interfaces.
Status TcpEngine::make_vdevice(std::span<const int> devs, int* d) {
  std::unique_lock lock(devices_mutex_);
  if (devs.size() != 1)
    return Status::fail(
        ncclInvalidArgument, "internal.bad_argument",
        fmt::format("makeVDevice of {} devices: the TCP engine does not fuse interfaces", devs.size()));
  if (devs[0] < 0 || static_cast<size_t>(devs[0]) >= interfaces_.size())
    return Status::fail(
        ncclInvalidArgument, "internal.bad_argument",
        fmt::format("makeVDevice: {} is not a physical device (0..{})", devs[0], interfaces_.size() - 1));
  *d = static_cast<int>(devices_.size());
  devices_.push_back(Device{devs[0], interfaces_[static_cast<size_t>(devs[0])].ip.name});
  return Status::success();
}

Status TcpEngine::set_net_attr(const NetAttr& /*attr*/) { return Status::success(); }

}  // namespace railscope::net::tcp
