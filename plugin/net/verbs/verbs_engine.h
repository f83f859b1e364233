// SPDX-License-Identifier: Apache-2.0
// The verbs engine: RDMA RC transport over libibverbs (InfiniBand, RoCE, soft-RoCE). Owns the
// discovered ports, their MR caches and async-event threads, the device list NCCL sees (physical
// ports, then fused virtual devices), and the connect state machines NCCL polls. The control path
// only: a verbs comm carries its own data path (send_comm.h, recv_comm.h).
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "plugin/net/common/pending_connects.h"
#include "plugin/net/transport.h"
#include "plugin/net/verbs/gpu/gdr_support.h"
#include "plugin/net/verbs/setup/discovery.h"
#include "plugin/net/verbs/setup/mr_cache.h"
#include "plugin/net/verbs/watch/async_events.h"
#include "plugin/net/verbs/watch/fabric_watch.h"

namespace railscope::net::verbs {

class SendConnector;  // connect.h
struct LocalDevice;

class VerbsEngine final : public Engine {
 public:
  // nullptr with *status explaining (device.none, device.filtered_out, port.down) when unusable.
  static std::unique_ptr<VerbsEngine> create(const InitArgs& args, Status* status);
  ~VerbsEngine() override;

  const char* name() const override { return "verbs"; }
  Status devices(int* ndev) override;
  Status properties(int dev, DeviceProps* props) override;
  Status listen(int dev, const CommConfig* config, HandleBytes handle, ListenComm** out) override;
  Status connect(int dev, const CommConfig& config, HandleBytes handle, SendComm** out) override;
  Status accept(ListenComm* listen, RecvComm** out) override;
  Status reg_mr(Comm* comm, void* data, size_t size, int type, MemHandle** out) override;
  Status reg_mr_dmabuf(Comm* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                       MemHandle** out) override;
  Status dereg_mr(Comm* comm, MemHandle* mr) override;
  Status close_send(SendComm* comm) override;
  Status close_recv(RecvComm* comm) override;
  Status close_listen(ListenComm* listen) override;
  Status make_vdevice(std::span<const int> devs, int* d) override;
  Status set_net_attr(const NetAttr& attr) override;

 private:
  VerbsEngine() = default;
  struct Device {
    std::vector<int> ports;  // indices into ports_
    std::string name;
    std::string pci_path;
    NicGdr gdr;  // what the device offers for GPU memory (all its ports offer)
  };
  Status local_device(int dev, LocalDevice* out) const;
  // Logs the device's GPUDirect decision and each refusal once per engine (INFO, NCCL_NET).
  void log_gdr_once(const Device& d);

  ncclProfilerCallback_t profiler_ = nullptr;
  std::string host_;
  std::vector<NetPort> ports_;
  std::vector<std::unique_ptr<PortHealth>> health_;
  std::vector<std::unique_ptr<MrCache>> caches_;
  std::unique_ptr<AsyncEvents> async_;
  std::unique_ptr<FabricWatch> fabric_;  // null when RAILSCOPE_NET_FABRIC_SAMPLING=0
  std::shared_ptr<const GdrHost> gdr_host_;

  std::mutex gdr_log_mutex_;
  std::set<std::string> gdr_logged_;  // lines already logged (bounded: a few per device)

  mutable std::shared_mutex devices_mutex_;
  std::deque<Device> devices_;  // deque: names stay put while devices are added

  PendingConnects<SendConnector> pending_;
};

}  // namespace railscope::net::verbs
