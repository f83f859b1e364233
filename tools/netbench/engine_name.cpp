// SPDX-License-Identifier: Apache-2.0
#include "engine_name.h"

#include "railscope/node/sysfs.h"

namespace railscope::netbench {

std::string engine_of_device(const std::string& device, const std::string& sysfs_root) {
  if (device.empty() || device.find('/') != std::string::npos || device == "." || device == "..")
    return "unknown";
  const node::Sysfs sysfs(sysfs_root);
  if (sysfs.exists("class/infiniband/" + device)) return "verbs";
  if (sysfs.exists("class/net/" + device)) return "TCP";
  return "unknown";
}

}  // namespace railscope::netbench
