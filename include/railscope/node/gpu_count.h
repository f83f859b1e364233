// SPDX-License-Identifier: Apache-2.0
// How many NVIDIA GPUs the node's PCI bus shows (sysfs bus/pci/devices: vendor 0x10de, class VGA or 3D
// controller; NVSwitches are bridges and do not count). Read once per process by the profiler, to know
// how many GPUs share the node's RDMA ports (comm_expectation.h); no driver, no hwloc.
#pragma once

#include "railscope/node/sysfs.h"

namespace railscope::node {

// 0 when none is found (no PCI tree under the root, or no NVIDIA GPU).
int count_nvidia_gpus(const Sysfs& fs);

}  // namespace railscope::node
