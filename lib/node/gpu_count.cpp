// SPDX-License-Identifier: Apache-2.0
#include "railscope/node/gpu_count.h"

namespace railscope::node {
namespace {

constexpr int64_t kVendorNvidia = 0x10de;
constexpr int64_t kClassDisplay = 0x03;  // PCI base class (sysfs "class" >> 16): VGA 0x0300, 3D 0x0302, ...

}  // namespace

std::vector<std::string> nvidia_gpu_addresses(const Sysfs& fs) {
  std::vector<std::string> out;
  for (const std::string& dev : fs.list("bus/pci/devices")) {
    const std::string base = "bus/pci/devices/" + dev;
    if (fs.read_int(base + "/vendor") != kVendorNvidia) continue;
    const auto cls = fs.read_int(base + "/class");
    if (cls && (*cls >> 16) == kClassDisplay) out.push_back(dev);
  }
  return out;
}

int count_nvidia_gpus(const Sysfs& fs) { return static_cast<int>(nvidia_gpu_addresses(fs).size()); }

}  // namespace railscope::node
