// SPDX-License-Identifier: Apache-2.0
// The NVIDIA GPUs the node's PCI bus shows (sysfs bus/pci/devices: vendor 0x10de, a display controller,
// PCI base class 0x03: VGA, 3D or other; NVSwitches are bridges and do not count). No driver, no hwloc.
// The profiler counts them once per process, to know how many GPUs share the node's RDMA ports
// (comm_expectation.h); `railscope doctor` checks their PCIe links.
#pragma once

#include <string>
#include <vector>

#include "railscope/node/sysfs.h"

namespace railscope::node {

// Their PCI addresses ("0000:1b:00.0"), sorted; empty when none is found (no PCI tree under the root, or
// no NVIDIA GPU).
std::vector<std::string> nvidia_gpu_addresses(const Sysfs& fs);

// How many: 0 when none is found.
int count_nvidia_gpus(const Sysfs& fs);

}  // namespace railscope::node
