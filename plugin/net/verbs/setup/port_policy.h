// SPDX-License-Identifier: Apache-2.0
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
#include "railscope/node/port_record.h"

namespace railscope::net::verbs {

struct PortSelection {
  // The ports the engine will open, in inventory order: the selected GID, the netdev MTU of that GID's
  // interface and the inventory's link facts (active_mtu and lid as lib/node read them; the engine
  // refreshes both from the port it opens).
  std::vector<node::PortRecord> ports;
  std::vector<diag::Finding> findings;  // gid.* about the choices; logged as warnings
  // When `ports` is empty: device.none, device.filtered_out or port.down, naming why.
  Status failure = Status::success();
};

// A selected GID's netdev other than the port's has its MTU read below the inventory's sysfs root.
PortSelection select_ports(const node::Inventory& inventory, const node::HcaFilter& hca,
                           const node::GidPolicy& policy);

}  // namespace railscope::net::verbs
