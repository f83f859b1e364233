// SPDX-License-Identifier: Apache-2.0
// Fake sysfs trees (and the ethtool answers beside them) laid out as real ConnectX-7 / ConnectX-6 ports
// present them, for the fabric-health tests. Where each layout comes from:
//  - class/infiniband/<dev>/ports/<p>/{state,phys_state,link_layer,rate} and counters/*: the kernel's
//    InfiniBand sysfs ABI (Documentation/ABI/stable/sysfs-class-infiniband; rate_show() in
//    drivers/infiniband/core/sysfs.c prints "400 Gb/sec (4X NDR)");
//  - hw_counters/*: the names mlx5 registers (drivers/infiniband/hw/mlx5/counters.c);
//  - device/device: the PCI device id (0x1021 ConnectX-7, 0x101d ConnectX-6 Dx, 0x101b ConnectX-6), as
//    mlx5_core_pci_table (drivers/net/ethernet/mellanox/mlx5/core/main.c) and the pci.ids database list them;
//  - railscope-fixture/ethtool/<if>/stats: `ethtool -S` of an mlx5e netdev (names from
//    drivers/net/ethernet/mellanox/mlx5/core/en_stats.c: vport, pport PHY, per-priority PFC, pause storm,
//    and a few per-channel ring statistics that the reader must leave out);
//  - railscope-fixture/ethtool/<if>/link: `ethtool <if>` of a ConnectX-7 400GbE port (link mode names from
//    the kernel's link_mode_names[] in net/ethtool/common.c).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace railscope::testing_fixtures {

class FabricTree {
 public:
  explicit FabricTree(const std::string& tag);  // a fresh folder under the temp directory
  ~FabricTree();
  FabricTree(const FabricTree&) = delete;
  FabricTree& operator=(const FabricTree&) = delete;

  std::string root() const { return root_.string(); }
  // Writes a file in place (same inode, as sysfs attributes keep theirs).
  void put(const std::string& rel, const std::string& content) const;

  // One InfiniBand port of a ConnectX-7 (or -6 with model "0x101b") at `rate` ("400 Gb/sec (4X NDR)"),
  // state ACTIVE/LinkUp unless `down` (DOWN/Polling), every counter zero.
  void ib_port(const std::string& dev, const std::string& rate, bool down = false,
               const std::string& model = "0x1021") const;
  // A ConnectX-7 400GbE RoCE port on netdev `ifname`, its counters, hw_counters and ethtool answers.
  void roce_port(const std::string& dev, const std::string& ifname, const std::string& rate,
                 int64_t supported_max_gbps = 400) const;
  // Sets one counter of a port (counters/ or hw_counters/).
  void counter(const std::string& dev, const std::string& name, uint64_t value, bool hw = false) const;
  // Rewrites the `ethtool -S` answer of a netdev with these values over the healthy defaults.
  void ethtool_stats(const std::string& ifname, const std::map<std::string, uint64_t>& values) const;

 private:
  std::filesystem::path root_;
};

// A healthy 8-port NDR InfiniBand node (mlx5_0..7 at 400 Gb/s, 4X NDR), as a DGX H100's compute rails.
void healthy_ndr8(const FabricTree& t);

// The value of the first sample of a Prometheus textfile whose line holds every one of `parts`; -1 when
// no line does.
double prom_sample(const std::string& text, const std::vector<std::string>& parts);

}  // namespace railscope::testing_fixtures
