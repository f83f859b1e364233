// SPDX-License-Identifier: Apache-2.0
// Which RDMA ports the verbs engine uses and everything it needs to know about each. The node is read
// by lib/node (node::discover: devices, ports, GID tables, speeds, netdev MTUs, PCI paths — the reader
// `railscope doctor` and the tuner use); the choice of ports and GIDs is port_policy.h. What is left
// here is verbs-specific: the open device context and PD (shared by every comm on the device), the
// port attributes and the device limits the QPs and CQs are sized by.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "plugin/net/transport.h"
#include "plugin/net/verbs/gpu/nic_gdr.h"
#include "railscope/ibv/handles.h"
#include "railscope/node/port_record.h"

namespace railscope::net::verbs {

struct GdrHost;  // gpu/gdr_support.h

// A port the engine uses: its record (port_policy.h's choice; active_mtu and lid as the opened port
// reports them) plus the verbs handles and device limits the engine holds for it.
struct NetPort : node::PortRecord {
  ibv::ContextPtr ctx;
  ibv::PdPtr pd;
  uint64_t guid = 0;
  int max_qp = 0;
  int max_qp_wr = 0;
  int max_cqe = 0;
  // GPUDirect: what this port offers for GPU memory (set by the engine after discovery).
  std::shared_ptr<const GdrHost> gdr_host;
  NicGdr gdr;
};

// Opens every selected, active port. An empty result is an error finding (device.none,
// device.filtered_out or port.down) explaining why.
Status discover_ports(std::vector<NetPort>* out);

// One line the engine logs about a port it uses, and whether it is a warning (RS_WARN) or information.
struct PortLogLine {
  bool warning = false;
  std::string text;
};
// node::check_port_mtu (the port's active_mtu against its netdev's MTU) as the engine logs it at init:
// findings of catalogue severity error or warning are warnings, the rest (mtu.small: the 1024-byte
// active_mtu a 1500-byte netdev carries, a healthy default) information.
std::vector<PortLogLine> port_mtu_log(const std::string& where, int active_mtu_bytes,
                                      const std::string& netdev, int netdev_mtu);

}  // namespace railscope::net::verbs
