// SPDX-License-Identifier: Apache-2.0
#include "railscope/node/gpu_count.h"

namespace railscope::node {
namespace {

constexpr int64_t kVendorNvidia = 0x10de;
constexpr int64_t kClassVga = 0x0300;  // PCI class code, base and sub-class (sysfs "class" >> 8)
constexpr int64_t kClass3d = 0x0302;

}  // namespace

int count_nvidia_gpus(const Sysfs& fs) {
  int n = 0;
  for (const std::string& dev : fs.list("bus/pci/devices")) {
    const std::string base = "bus/pci/devices/" + dev;
    if (fs.read_int(base + "/vendor") != kVendorNvidia) continue;
    const auto cls = fs.read_int(base + "/class");
    if (cls && ((*cls >> 8) == kClassVga || (*cls >> 8) == kClass3d)) ++n;
  }
  return n;
}

}  // namespace railscope::node
