// SPDX-License-Identifier: Apache-2.0
// The TCP engine: the net plugin's second transport (RAILSCOPE_TRANSPORT=tcp, or auto without an
// active RDMA port). One device per network interface NCCL's socket transport would use; host
// memory only; the same request lifecycle, statistics and diagnosis catalogue as the verbs engine.
// The control path only: a TCP comm carries its own data path (send_comm.h, recv_comm.h).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "plugin/net/common/pending_connects.h"
#include "plugin/net/tcp/handshake.h"
#include "plugin/net/tcp/interfaces.h"
#include "plugin/net/transport.h"

namespace railscope::net::tcp {

class TcpEngine : public Engine {
 public:
  static std::unique_ptr<TcpEngine> create(const InitArgs& args, Status* status);
  ~TcpEngine() override = default;

  const char* name() const override { return "tcp"; }
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
  TcpEngine() = default;
  struct Device {
    int iface = 0;  // index into interfaces_
    std::string name;
  };
  Status local_end(int dev, LocalEnd* out, const NetInterface** iface) const;

  std::string host_;
  TcpOptions options_;
  ncclProfilerCallback_t profiler_ = nullptr;
  std::vector<NetInterface> interfaces_;
  mutable std::shared_mutex devices_mutex_;
  std::deque<Device> devices_;  // stable addresses: NCCL keeps the name pointers
  PendingConnects<TcpConnector> pending_;
};

}  // namespace railscope::net::tcp
