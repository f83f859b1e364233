// SPDX-License-Identifier: Apache-2.0
// The PCIe link a device trained against what it and its slot can do, as `lspci -vv` shows it (LnkSta
// against LnkCap): the kernel's current_link_width / current_link_speed and max_link_width /
// max_link_speed attributes of the PCI device (Documentation/ABI/testing/sysfs-bus-pci). A NIC at x8 in
// an x16 link, or at 8 GT/s where it can do 16, moves half the bytes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace railscope::node {

class Sysfs;

struct PcieLink {
  int width = 0;             // lanes trained (current_link_width); 0 = unknown
  int max_width = 0;         // lanes the device can do (max_link_width)
  double speed_gts = 0;      // GT/s per lane trained (current_link_speed "16.0 GT/s PCIe"); 0 = unknown
  double max_speed_gts = 0;  // GT/s the device can do (max_link_speed)
  std::string reported_by;   // "device", or the upstream port's PCI address when the device has no link

  bool narrower() const { return width > 0 && max_width > 0 && width < max_width; }
  bool slower() const { return speed_gts > 0 && max_speed_gts > 0 && speed_gts < max_speed_gts; }
  std::string text() const;      // "x8 at 16 GT/s"
  std::string max_text() const;  // "x16 at 32 GT/s"
};

// "16.0 GT/s PCIe" / "8 GT/s" / "2.5 GT/s" → GT/s; 0 for "Unknown" or anything else.
double parse_link_speed_gts(std::string_view text);

// The link of the PCI device at rel (e.g. "class/infiniband/mlx5_0/device"); where the device reports
// none of its own (a virtual function, some endpoints behind a switch), the upstream port's, one level up
// its sysfs path, as lspci reads the bridge. nullopt when neither has the attributes.
std::optional<PcieLink> read_pcie_link(const Sysfs& sysfs, const std::string& rel);

}  // namespace railscope::node
