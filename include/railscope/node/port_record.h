// SPDX-License-Identifier: Apache-2.0
// One RDMA port as a connection uses it: which port, the GID chosen on it and the link facts both ends
// check before connecting. The one description of a port from the node's inventory to the handshake:
// the verbs engine's port choice builds it from the inventory, the engine's open port adds its verbs
// handles to it, and the handshake encodes it (and decodes a peer's, range-checked, into one).
#pragma once

#include <cstdint>
#include <string>

#include "railscope/node/gid.h"
#include "railscope/node/link.h"

namespace railscope::node {

struct PortRecord {
  std::string dev_name;  // "rxe0"
  int port = 1;          // 1..255
  LinkLayer link_layer = LinkLayer::Unknown;
  GidIndex gid_index = 0;
  Gid gid;
  GidType gid_type = GidType::Unknown;
  std::string netdev;      // the GID's interface (RoCE); empty on InfiniBand or when unknown
  int netdev_mtu = 0;      // bytes, of `netdev`; 0 = unknown
  int active_mtu = 0;      // bytes (256..4096), as node::Port; 0 = unknown
  uint16_t lid = 0;        // InfiniBand: the port's LID, the peer's QPs address it
  int64_t speed_mbps = 0;  // Port::speed_mbps: lanes × per-lane rate, NCCL's figure; 0 = unknown
  std::string pci_path;    // empty: virtual device (rxe, siw). Local only: the handshake does not carry it

  bool operator==(const PortRecord&) const = default;
};

}  // namespace railscope::node
