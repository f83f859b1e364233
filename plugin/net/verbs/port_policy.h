// Which ports of the node the verbs engine uses, decided over lib/node's inventory (node::discover,
// the reader `railscope doctor` uses too): NCCL_IB_HCA through node::HcaFilter, the GID index through
// node::select_gid on each port's GID table. Pure: no verbs calls, so it is unit-tested on a made-up
// inventory (tests/unit/node/engine_selection_test.cpp).
#pragma once

#include <string>
#include <vector>

#include "plugin/net/transport.h"
#include "railscope/core/diagnosis.h"
#include "railscope/node/gid_selection.h"
#include "railscope/node/hca_filter.h"
#include "railscope/node/inventory.h"

namespace railscope::net::verbs {

// One port the engine will open, with everything lib/node knows about it.
struct PortPlan {
  std::string device;  // "rxe0"
  int port = 1;
  node::LinkLayer link_layer = node::LinkLayer::Unknown;
  int gid_index = 0;
  node::Gid gid;
  node::GidType gid_type = node::GidType::Unknown;
  std::string netdev;      // the selected GID's interface (RoCE); empty on IB or when unknown
  int netdev_mtu = 0;      // 0 = unknown
  int64_t speed_mbps = 0;  // node::Port::speed_mbps (node::port_speed_mbps after verbs discovery)
  std::string pci_path;    // empty: virtual device (rxe, siw)
};

struct PortSelection {
  std::vector<PortPlan> ports;          // in inventory order
  std::vector<diag::Finding> findings;  // gid.* about the choices; logged as warnings
  // When `ports` is empty: device.none, device.filtered_out or port.down, naming why.
  Status failure = Status::success();
};

// A selected GID's netdev other than the port's has its MTU read below the inventory's sysfs root.
PortSelection select_ports(const node::Inventory& inventory, const node::HcaFilter& hca,
                           const node::GidPolicy& policy);

}  // namespace railscope::net::verbs
