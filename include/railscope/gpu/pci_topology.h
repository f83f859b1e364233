// SPDX-License-Identifier: Apache-2.0
// GPUs and RDMA NICs in the PCI tree (hwloc), and the NCCL-style distance class between each GPU and
// each NIC. The topology comes from the running system or from an hwloc XML file (lstopo --of xml),
// so decisions can be checked on a laptop against a saved DGX topology.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "railscope/gpu/path_type.h"

namespace railscope::gpu {

enum class DeviceKind { Gpu, Nic };

struct PciDevice {
  DeviceKind kind = DeviceKind::Gpu;
  std::string bdf;  // "dddd:bb:dd.f", lower case
  uint16_t vendor = 0, device = 0, class_id = 0;
  std::string name;                  // NIC: RDMA device name(s) (mlx5_0); GPU: "" (see report)
  std::vector<std::string> netdevs;  // NIC: network interfaces hwloc saw under it
  int numa = -1;                     // NUMA node of its host bridge, -1 = unknown
};

// An RDMA device the caller already knows (lib/node): its name and PCI path
// (realpath of /sys/class/infiniband/<dev>/device). Lets NICs hwloc cannot name be matched by address.
struct NicHint {
  std::string name;
  std::string pci_path;
};

class PciTopology {
 public:
  // xml_file empty = this system. nullopt + *error on failure (bad XML, unreadable file).
  static std::optional<PciTopology> load(const std::string& xml_file, const std::vector<NicHint>& hints,
                                         std::string* error);
  PciTopology(PciTopology&&) noexcept;
  PciTopology& operator=(PciTopology&&) noexcept;
  ~PciTopology();

  const std::string& source() const;  // "system" or the file name
  const std::vector<PciDevice>& gpus() const;
  const std::vector<PciDevice>& nics() const;
  PciPath path(size_t gpu, size_t nic) const;

 private:
  struct Impl;
  explicit PciTopology(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The topology file to use: explicit argument, else RAILSCOPE_TOPO_FILE, else "" (system).
std::string topology_file_from(const std::string& explicit_file);

}  // namespace railscope::gpu
