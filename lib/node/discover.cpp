// SPDX-License-Identifier: Apache-2.0
// discover(): the device list from libibverbs (real /sys) or from sysfs (any root), then per device
// the sysfs facts overlaid with what verbs reports. NCCL's speed tables live here too.
#include <fmt/format.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

#include "discovery_internal.h"
#include "railscope/ibv/handles.h"

namespace railscope::node {

int width_from_ibv(int bits) {
  switch (bits) {
    case 1: return 1;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
    default: return 0;
  }
}

int lane_mbps_from_ibv(uint32_t bits) {
  switch (bits) {
    case 1: return 2500;      // SDR
    case 2: return 5000;      // DDR
    case 4: return 10000;     // QDR
    case 8: return 10000;     // FDR10
    case 16: return 14000;    // FDR
    case 32: return 25000;    // EDR
    case 64: return 50000;    // HDR
    case 128: return 100000;  // NDR
    case 256: return 200000;  // XDR
    default: return 0;
  }
}

uint32_t speed_bits_from_ibv(uint32_t active_speed, uint32_t active_speed_ex) {
  return active_speed_ex != 0 ? active_speed_ex : active_speed;
}

int64_t port_speed_mbps(int active_width_bits, uint32_t active_speed, uint32_t active_speed_ex) {
  return int64_t{width_from_ibv(active_width_bits)} *
         lane_mbps_from_ibv(speed_bits_from_ibv(active_speed, active_speed_ex));
}

Inventory discover(const DiscoverOptions& options) {
  Inventory inv;
  const Sysfs sysfs(options.sysfs_root.empty() ? Sysfs::default_root() : options.sysfs_root);
  inv.sysfs_root = sysfs.root();

  const ibv::Api* v = options.use_verbs && sysfs.is_real() ? ibv::api() : nullptr;
  if (options.use_verbs && sysfs.is_real() && v == nullptr) inv.verbs_error = ibv::load_error();
  if (v != nullptr) {
    int n = 0;
    errno = 0;
    ibv::DeviceListPtr list(v->get_device_list(&n));
    if (!list) {
      inv.verbs_error = fmt::format("ibv_get_device_list: {}", std::strerror(errno));
    } else {
      inv.used_verbs = true;
      for (int i = 0; i < n; ++i) {
        ibv_device* d = list.get()[i];
        const char* name = v->get_device_name(d);
        if (name == nullptr) continue;
        Device dev = read_device_from_sysfs(sysfs, name, /*read_gids=*/false);
        dev.notes.clear();  // verbs answers what sysfs could not
        std::string error;
        if (!read_device_from_verbs(sysfs, d, dev, &error)) {
          dev = read_device_from_sysfs(sysfs, name, /*read_gids=*/true);
          dev.notes.push_back(error + "; facts from sysfs only");
        }
        inv.devices.push_back(std::move(dev));
      }
      return inv;
    }
  }
  Inventory from_sysfs = discover_sysfs(inv.sysfs_root);
  from_sysfs.verbs_error = std::move(inv.verbs_error);
  return from_sysfs;
}

}  // namespace railscope::node
