// SPDX-License-Identifier: Apache-2.0
// Which transport carries a net plugin's device, as netbench's header names it. NCCL's net ABI has no
// such property, so it is read from what the device's name is on this node: an RDMA device (sysfs
// class/infiniband/<name>) is driven through verbs, a network interface (class/net/<name>) through
// TCP sockets (railscope's TCP engine, which RAILSCOPE_TRANSPORT=auto picks without an active RDMA
// port, or NCCL's own socket transport).
#pragma once

#include <string>

namespace railscope::netbench {

// "verbs", "TCP", or "unknown" (neither, e.g. a plugin's own device naming). `sysfs_root` as
// node::Sysfs takes it (RAILSCOPE_SYSFS_ROOT in tests).
std::string engine_of_device(const std::string& device, const std::string& sysfs_root);

}  // namespace railscope::netbench
