// Which RDMA ports the verbs engine uses and everything it needs to know about each: the open
// device context and PD (shared by every comm on the device), port attributes, the selected GID, the
// netdev behind a RoCE port and its MTU, speed, guid and PCI path. Port selection (NCCL_IB_HCA) and
// GID selection (NCCL_IB_GID_INDEX, NCCL_IB_ROCE_VERSION_NUM, NCCL_IB_ADDR_FAMILY) are in
// port_policy.h, the code `railscope doctor` shares.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "plugin/net/transport.h"
#include "plugin/net/verbs/gdr_support.h"
#include "plugin/net/verbs/handshake.h"
#include "plugin/net/verbs/raii.h"

namespace railscope::net::verbs {

struct NetPort {
  std::string dev_name;  // "rxe0"
  int port = 1;
  ContextPtr ctx;
  PdPtr pd;
  ibv_port_attr attr{};
  WireLinkLayer link_layer = WireLinkLayer::Unknown;
  int gid_index = 0;
  std::array<uint8_t, 16> gid{};
  WireGidType gid_type = WireGidType::Unknown;
  std::string netdev;
  int netdev_mtu = 0;
  int speed_mbps = 0;
  uint64_t guid = 0;
  std::string pci_path;  // empty: virtual device (rxe on veth)
  int max_qp = 0;
  int max_qp_wr = 0;
  int max_cqe = 0;
  // GPUDirect: what this port offers for GPU memory (set by the engine after discovery).
  std::shared_ptr<const GdrHost> gdr_host;
  NicGdr gdr;

  // What the handshake carries about this port (rkey filled per connection).
  DeviceInfo info() const;
};

// Opens every selected, active port. An empty result is an error finding (device.none,
// device.filtered_out or port.down) explaining why.
Status discover_ports(std::vector<NetPort>* out);

// Port speed in Mbps from ibv active_width / active_speed (NCCL's table).
int port_speed_mbps(uint8_t active_width, uint8_t active_speed);

}  // namespace railscope::net::verbs
