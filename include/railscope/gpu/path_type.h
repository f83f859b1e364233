// SPDX-License-Identifier: Apache-2.0
// PCIe/NVLink distance classes between a GPU and a NIC, with NCCL's names and order (closest first),
// and the parsing of NCCL_NET_GDR_LEVEL with NCCL's rules (names are case-sensitive; integers use
// NCCL's old numbering 0=LOC 1=PIX 2=PXB 3=PHB 4+=SYS; anything else leaves the default).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railscope::gpu {

// Values equal NCCL's PATH_* constants, so comparisons mean what they mean in NCCL.
enum class PathType : int {
  Loc = 0,  // same device
  Nvl = 1,  // NVLink
  Nvb = 2,  // NVLink through another GPU
  C2c = 3,  // chip-to-chip link (Grace Hopper/Blackwell)
  Pix = 4,  // through one PCIe switch
  Pxb = 5,  // through several PCIe switches, not through the CPU
  P2c = 6,  // GPU reaches the CPU by C2C, the NIC hangs off that CPU's PCIe
  Pxn = 7,  // through another GPU (NVLink), then PCIe
  Phb = 8,  // through a CPU host bridge (same NUMA node)
  Sys = 9,  // across the inter-socket / inter-NUMA link
};

std::string_view to_string(PathType p);

// NCCL's default NCCL_NET_GDR_LEVEL.
inline constexpr PathType kDefaultGdrLevel = PathType::Pxb;

struct GdrLevel {
  PathType level = kDefaultGdrLevel;
  bool from_env = false;  // the user set a value NCCL accepts
  std::string note;       // non-empty when the value was ignored (why)
};

// The path between one GPU and one NIC (pci_topology.h computes it from hwloc).
struct PciPath {
  PathType type = PathType::Sys;
  // PCIe ports strictly between the two devices whose ACS setting matters (downstream/upstream
  // ports of the switch(es) they share); empty when the path crosses the root complex (PHB/SYS).
  std::vector<std::string> switch_ports;
  std::string via;  // a few words: "switch 0000:05:00.0", "host bridge, NUMA 0", "NUMA 0 <-> NUMA 1"
};

// Parses a NCCL_NET_GDR_LEVEL value exactly as NCCL 2.28 does. nullopt input = unset.
GdrLevel parse_gdr_level(std::optional<std::string_view> text);
// Reads NCCL_NET_GDR_LEVEL from the environment (through the params registry).
GdrLevel gdr_level_from_env();

}  // namespace railscope::gpu
