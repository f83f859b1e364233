// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/verbs_engine.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "plugin/net/common/random_id.h"
#include "plugin/net/common/refusals.h"
#include "plugin/net/common/socket.h"
#include "plugin/net/common/unverified_connections.h"
#include "plugin/net/verbs/gpu/gpu_registration.h"
#include "plugin/net/verbs/recv_comm.h"
#include "plugin/net/verbs/send_comm.h"
#include "plugin/net/verbs/setup/connect.h"
#include "railscope/core/log.h"
#include "railscope/node/mtu.h"

namespace railscope::net::verbs {
namespace {

struct VerbsListen : ListenComm {
  int dev = 0;
  Fd fd;
  uint64_t nonce = 0;
  LinkParams link;  // this end's own traffic class and service level: the connection takes the sender's
  std::mutex mutex;
  std::unique_ptr<RefusalLog> refusals;  // names the listener: "10.0.0.1:41234 (rxe0)"; outlives the set
  std::unique_ptr<UnverifiedConnections<std::unique_ptr<RecvAcceptor>>> unverified;
  std::vector<std::unique_ptr<RecvAcceptor>> verified;  // the real peers' setups in progress
};

Status bad_handle(const std::string& why) {
  return Status::fail(
      ncclInvalidArgument, "peer.bad_handshake", fmt::format("invalid connection handle: {}", why),
      "Pass connect() the handle listen() produced on the peer, unmodified (all 128 bytes); run the "
      "same railscope build on every node");
}

}  // namespace

std::unique_ptr<VerbsEngine> VerbsEngine::create(const InitArgs& args, Status* status) {
  std::unique_ptr<VerbsEngine> e(new VerbsEngine());
  e->profiler_ = args.profiler;
  e->host_ = local_host_name();
  if (Status st = discover_ports(&e->ports_); !st.ok()) {
    *status = std::move(st);
    return nullptr;
  }
  // GPUDirect: host facts once, the DMA-BUF probe once per port (on the PD discovery allocated).
  e->gdr_host_ = std::make_shared<const GdrHost>(detect_gdr_host());
  for (NetPort& p : e->ports_) {
    p.gdr_host = e->gdr_host_;
    p.gdr =
        decide_nic_gdr(*e->gdr_host_, p.dev_name, !p.pci_path.empty(), gpu::probe_verbs_dmabuf(p.pd.get()));
  }
  if (!e->gdr_host_->policy.level.note.empty())
    RS_WARN("NET/railscope : {}",
            diag::one_line(diag::make("config.bad_env", e->gdr_host_->policy.level.note)));
  std::string summary;
  for (size_t i = 0; i < e->ports_.size(); ++i) {
    const NetPort& p = e->ports_[i];
    e->health_.push_back(std::make_unique<PortHealth>());
    e->caches_.push_back(std::make_unique<MrCache>(p.pd, fmt::format("{}:{}", p.dev_name, p.port)));
    e->devices_.push_back(Device{{static_cast<int>(i)}, p.dev_name, p.pci_path, p.gdr});
    const int active_mtu = p.active_mtu;
    summary += fmt::format(" [{}]{}:{}/{} GID[{}] {} {} MTU {}", i, p.dev_name, p.port,
                           p.link_layer == node::LinkLayer::Ethernet ? "RoCE" : "IB", p.gid_index,
                           p.gid.to_string(), p.netdev.empty() ? "-" : p.netdev, active_mtu);
    // The port's active_mtu against its netdev's MTU (as `railscope doctor` checks it), once per port.
    for (const PortLogLine& line :
         port_mtu_log(fmt::format("{}:{}", p.dev_name, p.port), active_mtu, p.netdev, p.netdev_mtu)) {
      if (line.warning)
        RS_WARN("NET/railscope : {}", line.text);
      else
        RS_INFO(NCCL_INIT | NCCL_NET, "NET/railscope : {}", line.text);
    }
  }
  const bool sampling = FabricWatch::enabled();
  e->async_ = std::make_unique<AsyncEvents>(e->ports_, e->health_, sampling);
  if (sampling) e->fabric_ = std::make_unique<FabricWatch>(e->ports_, e->health_);
  RS_INFO(NCCL_INIT | NCCL_NET, "NET/railscope : using{}", summary);
  return e;
}

VerbsEngine::~VerbsEngine() {
  fabric_.reset();
  async_.reset();
  pending_.clear();
}

Status VerbsEngine::devices(int* ndev) {
  std::shared_lock lock(devices_mutex_);
  *ndev = static_cast<int>(devices_.size());
  return Status::success();
}

Status VerbsEngine::properties(int dev, DeviceProps* props) {
  std::shared_lock lock(devices_mutex_);
  if (dev < 0 || static_cast<size_t>(dev) >= devices_.size())
    return Status::fail(ncclInvalidArgument, "internal.bad_argument",
                        fmt::format("device {} does not exist ({} devices)", dev, devices_.size()));
  const Device& d = devices_[static_cast<size_t>(dev)];
  const NetPort& first = ports_[static_cast<size_t>(d.ports[0])];
  props->name = d.name.c_str();
  props->pci_path = d.pci_path.empty() ? nullptr : d.pci_path.c_str();
  props->guid = first.guid;
  props->ptr_support = d.gdr.ptr_support;  // gdr_support.h: HOST, plus CUDA/DMABUF where GPUDirect works
  log_gdr_once(d);
  props->reg_is_global = 1;
  props->force_flush = 0;
  props->speed_mbps = 0;
  props->max_comms = first.max_qp;
  for (int p : d.ports) {
    props->speed_mbps += static_cast<int>(ports_[static_cast<size_t>(p)].speed_mbps);
    props->max_comms = std::min(props->max_comms, ports_[static_cast<size_t>(p)].max_qp);
  }
  props->port = first.port;
  props->latency_us = 0.0f;
  props->max_recvs = kMaxRecvs;
  props->vdevs = d.ports;
  props->max_coll_bytes = size_t{512} << 20;
  props->max_multi_request_size = 1;
  return Status::success();
}

void VerbsEngine::log_gdr_once(const Device& d) {
  std::vector<std::string> lines{gdr_decision_line(*gdr_host_, d.name, d.gdr)};
  for (const auto& f : d.gdr.refusals) lines.push_back(diag::one_line(f));
  std::lock_guard lock(gdr_log_mutex_);
  for (auto& line : lines)
    if (gdr_logged_.insert(line).second) RS_INFO(NCCL_INIT | NCCL_NET, "NET/railscope : {}", line);
}

Status VerbsEngine::local_device(int dev, LocalDevice* out) const {
  std::shared_lock lock(devices_mutex_);
  if (dev < 0 || static_cast<size_t>(dev) >= devices_.size())
    return Status::fail(ncclInvalidArgument, "internal.bad_argument",
                        fmt::format("device {} does not exist ({} devices)", dev, devices_.size()));
  for (int p : devices_[static_cast<size_t>(dev)].ports) {
    out->ports.push_back(&ports_[static_cast<size_t>(p)]);
    out->health.push_back(health_[static_cast<size_t>(p)].get());
    out->caches.push_back(caches_[static_cast<size_t>(p)].get());
  }
  out->profiler = profiler_;
  out->host = host_;
  return Status::success();
}

Status VerbsEngine::listen(int dev, const CommConfig* config, HandleBytes handle, ListenComm** out) {
  LocalDevice ld;
  if (Status st = local_device(dev, &ld); !st.ok()) return st;
  auto l = std::make_unique<VerbsListen>();
  l->dev = dev;
  l->nonce = random_id();
  l->link = config != nullptr ? link_params_from_env(config->traffic_class) : link_params_unknown_comm();
  ListenHandle h;
  h.family = 4;
  h.nonce = l->nonce;
  const NetPort& p = *ld.ports[0];
  if (p.gid.family() == node::AddrFamily::V4)
    std::copy(p.gid.raw.begin() + 12, p.gid.raw.end(), h.addr.begin());  // the RoCE netdev's own address
  else
    fallback_address(&h.addr);
  // Bound to the address the handle advertises, not to every address of the host (as the TCP engine).
  if (Status st = open_listener(SocketAddress{4, h.addr, 0}, &l->fd, &h.port); !st.ok()) return st;
  l->refusals = std::make_unique<RefusalLog>(fmt::format("{} ({})", peer_text(h), p.dev_name));
  l->unverified = std::make_unique<UnverifiedConnections<std::unique_ptr<RecvAcceptor>>>(l->refusals.get());
  encode_handle(h, handle);
  *out = l.release();
  return Status::success();
}

Status VerbsEngine::connect(int dev, const CommConfig& config, HandleBytes handle, SendComm** out) {
  std::string why;
  auto h = decode_handle(handle, &why);
  if (!h) return bad_handle(why);
  auto make = [&](std::unique_ptr<SendConnector>* conn, uint64_t* id) {
    LocalDevice ld;
    if (Status st = local_device(dev, &ld); !st.ok()) return st;
    *conn = std::make_unique<SendConnector>(*h, std::move(ld), link_params_from_env(config.traffic_class));
    if (Status st = (*conn)->start(); !st.ok()) return st;
    *id = random_id();
    return Status::success();
  };
  return pending_.step<VerbsSendComm>({&store_connect_id, &bad_handle}, h->connect_id, handle, make, out,
                                      2 * kHandshakeTimeout);
}

Status VerbsEngine::accept(ListenComm* listen, RecvComm** out) {
  auto* l = dynamic_cast<VerbsListen*>(listen);
  if (l == nullptr)
    return Status::fail(ncclInternalError, "internal.bad_argument", "accept on a foreign listen comm");
  std::lock_guard lock(l->mutex);
  LocalDevice ld;
  if (Status st = local_device(l->dev, &ld); !st.ok()) return st;
  // A failure after the HELLO proved the connection is the real peer's: accept() returns it.
  Status failed;
  auto make = [&](Fd fd, const std::string& peer) {
    tune_socket(fd.get(), static_cast<int>(kHandshakeTimeout.count()));
    return std::make_unique<RecvAcceptor>(std::move(fd), peer, l->nonce, ld, l->link);
  };
  auto advance = [](std::unique_ptr<RecvAcceptor>& a) {
    VerbsRecvComm* comm = nullptr;  // stays null until well after the HELLO (QPNS, READY)
    Status st = a->step(&comm);
    if (a->verified()) return Verdict::verified(std::move(st));
    if (!st.ok()) return Verdict::refused(a->refusal(), std::move(st));
    return Verdict::waiting();
  };
  auto on_verified = [&](std::unique_ptr<RecvAcceptor>&& a, Status st) {
    if (st.ok())
      l->verified.push_back(std::move(a));
    else if (failed.ok())
      failed = std::move(st);
  };
  if (Status st = l->unverified->accept_from(l->fd, make, advance, on_verified); !st.ok()) return st;
  l->unverified->advance_all(advance, on_verified);
  if (!failed.ok()) return failed;
  for (size_t i = 0; i < l->verified.size();) {
    VerbsRecvComm* comm = nullptr;
    Status st = l->verified[i]->step(&comm);
    if (st.ok() && comm == nullptr) {
      ++i;
      continue;
    }
    l->verified.erase(l->verified.begin() + static_cast<std::ptrdiff_t>(i));
    if (!st.ok()) return st;  // the real peer's failure: NCCL hears it, as before
    *out = comm;
    return Status::success();
  }
  return Status::success();
}

Status VerbsEngine::reg_mr(Comm* comm, void* data, size_t size, int type, MemHandle** out) {
  auto* c = dynamic_cast<Connection*>(comm);
  if (c == nullptr)
    return Status::fail(ncclInternalError, "internal.bad_argument", "regMr on a foreign comm");
  VerbsMr* mr = nullptr;
  Status st = type == NCCL_PTR_CUDA ? register_cuda_on_lanes(*c, data, size, &mr)
                                    : register_on_lanes(*c, data, size, type, &mr);
  if (!st.ok()) return st;
  *out = mr;
  return Status::success();
}

Status VerbsEngine::reg_mr_dmabuf(Comm* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                                  MemHandle** out) {
  auto* c = dynamic_cast<Connection*>(comm);
  if (c == nullptr)
    return Status::fail(ncclInternalError, "internal.bad_argument", "regMrDmaBuf on a foreign comm");
  VerbsMr* mr = nullptr;
  if (Status st = register_dmabuf_on_lanes(*c, data, size, type, offset, fd, &mr); !st.ok()) return st;
  *out = mr;
  return Status::success();
}

Status VerbsEngine::dereg_mr(Comm* /*comm*/, MemHandle* mr) {
  delete mr;  // VerbsMr releases its cache references
  return Status::success();
}

Status VerbsEngine::close_send(SendComm* comm) {
  auto* c = static_cast<VerbsSendComm*>(comm);
  c->drain();
  c->emit_stats("send");
  delete c;
  return Status::success();
}

Status VerbsEngine::close_recv(RecvComm* comm) {
  auto* c = static_cast<VerbsRecvComm*>(comm);
  c->close();
  c->emit_stats("recv");
  delete c;
  return Status::success();
}

Status VerbsEngine::close_listen(ListenComm* listen) {
  delete listen;
  return Status::success();
}

Status VerbsEngine::make_vdevice(std::span<const int> devs, int* d) {
  std::unique_lock lock(devices_mutex_);
  Device v;
  for (int p : devs) {
    if (p < 0 || static_cast<size_t>(p) >= ports_.size())
      return Status::fail(
          ncclInvalidArgument, "internal.bad_argument",
          fmt::format("makeVDevice: {} is not a physical device (0..{})", p, ports_.size() - 1));
    for (int q : v.ports)
      if (q == p)
        return Status::fail(ncclInvalidArgument, "internal.bad_argument",
                            fmt::format("makeVDevice: device {} listed twice", p));
    if (!v.ports.empty() &&
        ports_[static_cast<size_t>(p)].link_layer != ports_[static_cast<size_t>(v.ports[0])].link_layer)
      return Status::fail(ncclInvalidArgument, "link.layer_mismatch",
                          fmt::format("makeVDevice: {} and {} have different link layers",
                                      ports_[static_cast<size_t>(p)].dev_name,
                                      ports_[static_cast<size_t>(v.ports[0])].dev_name));
    v.ports.push_back(p);
    v.name += (v.name.empty() ? "" : "+") + ports_[static_cast<size_t>(p)].dev_name;
  }
  if (v.ports.empty() || v.ports.size() > static_cast<size_t>(kMaxDevsPerEnd))
    return Status::fail(
        ncclInvalidArgument, "internal.bad_argument",
        fmt::format("makeVDevice: {} devices (1..{} allowed)", v.ports.size(), kMaxDevsPerEnd));
  v.pci_path = ports_[static_cast<size_t>(v.ports[0])].pci_path;
  std::vector<const NicGdr*> members;
  for (int p : v.ports) members.push_back(&ports_[static_cast<size_t>(p)].gdr);
  v.gdr = combine_nic_gdr(members);
  *d = static_cast<int>(devices_.size());
  RS_INFO(NCCL_NET, "NET/railscope : virtual device {} = {}", *d, v.name);
  devices_.push_back(std::move(v));
  return Status::success();
}

Status VerbsEngine::set_net_attr(const NetAttr& /*attr*/) {
  return Status::success();  // accepted; the verbs engine has no per-pattern tuning yet
}

}  // namespace railscope::net::verbs
