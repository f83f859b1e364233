// SPDX-License-Identifier: Apache-2.0
// Pieces shared by the sysfs and verbs halves of discovery (not part of the public API).
#pragma once

#include <string>

#include "railscope/node/inventory.h"
#include "railscope/node/sysfs.h"

struct ibv_device;  // libibverbs' (infiniband/verbs.h), at global scope: not a railscope::node one

namespace railscope::node {

// RoCE: the netdev behind the port (from its GIDs, else gid_attrs/ndevs/0) and its MTU.
void fill_netdev(const Sysfs& sysfs, const std::string& device, Port& port);

// Overlays what libibverbs says about `dev` (opened by name); false and `error` when it cannot.
bool read_device_from_verbs(const Sysfs& sysfs, struct ibv_device* ibdev, Device& dev, std::string* error);

}  // namespace railscope::node
