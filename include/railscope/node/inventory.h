// SPDX-License-Identifier: Apache-2.0
// What the node has: RDMA devices, their ports, GID tables and the netdevs behind RoCE ports.
// Read through real libibverbs (when the sysfs root is the real /sys) and sysfs; anything that cannot
// be read is left "unknown" (0 / empty) and noted, never an error. Used by the net plugin, the tuner
// and `railscope doctor` alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "railscope/node/gid_selection.h"
#include "railscope/node/link.h"
#include "railscope/node/pcie_link.h"

namespace railscope::node {

struct Port {
  int number = 0;
  PortState state = PortState::Unknown;
  int phys_state = 0;  // 0 = unknown; 5 = LinkUp
  LinkLayer link_layer = LinkLayer::Unknown;
  int active_mtu = 0;  // bytes (256..4096); 0 = unknown (sysfs alone has no MTU)
  int max_mtu = 0;
  int width = 0;           // lanes (1, 2, 4, 8, 12); 0 = unknown
  int lane_mbps = 0;       // per-lane rate (2500 SDR ... 200000 XDR); 0 = unknown
  int64_t speed_mbps = 0;  // width × lane rate (NCCL's figure); 0 = unknown
  std::string rate_text;   // sysfs "rate", e.g. "10 Gb/sec (1X QDR)"
  int lid = 0;
  int gid_tbl_len = 0;
  std::vector<GidEntry> gids;  // non-empty entries, by index
  std::string netdev;          // RoCE: interface behind the port; empty when none/unknown
  int netdev_mtu = 0;          // 0 = unknown

  bool active() const { return state == PortState::Active; }
};

struct Device {
  std::string name;
  std::string node_guid;         // "0250:56ff:fe8f:1234" form; empty = unknown
  std::string sys_image_guid;    // NCCL's device guid
  std::string pci_path;          // realpath of class/infiniband/<dev>/device, or "virtual"
  bool is_virtual = false;       // no PCI device behind it (rxe, siw)
  std::string vendor;            // "0x15b3"; empty = unknown
  std::string vendor_part;       // "4123"; empty = unknown
  std::string fw_ver;            // empty = unknown
  std::string board_id;          // the HCA's part, e.g. "MT_0000000838" (sysfs board_id); empty = unknown
  std::string hca_type;          // e.g. "MT4129" (sysfs hca_type); empty = unknown
  std::optional<PcieLink> pcie;  // the PCIe link it trained, against its capability; nullopt = unknown
  int max_qp = 0;
  std::vector<Port> ports;
  std::vector<std::string> notes;  // what could not be read, and why
};

struct Inventory {
  std::vector<Device> devices;
  bool used_verbs = false;  // libibverbs answered (device list opened)
  std::string verbs_error;  // why not, when it did not
  std::string sysfs_root;
};

struct DiscoverOptions {
  std::string sysfs_root;  // empty = Sysfs::default_root()
  // Query libibverbs; only meaningful with the real /sys (a fake root describes another node).
  bool use_verbs = true;
};

Inventory discover(const DiscoverOptions& options = {});
// The same from sysfs alone: never touches libibverbs, so a library that calls only this (the tuner,
// the profiler) does not need libibverbs installed to load.
Inventory discover_sysfs(const std::string& sysfs_root = "");

// Sysfs-only discovery of one device (used by discover(); exposed for tests).
class Sysfs;
Device read_device_from_sysfs(const Sysfs& sysfs, const std::string& name, bool read_gids);
// GID table of one port from sysfs: gids/<i> for i < limit (limit <= 0: as many files as there are),
// skipping empty entries before reading their attributes.
std::vector<GidEntry> read_gids_from_sysfs(const Sysfs& sysfs, const std::string& device, int port,
                                           LinkLayer link_layer, int limit);
// MTU of a netdev (class/net/<netdev>/mtu); 0 when unknown, unreadable or the name is not a plain name.
int read_netdev_mtu(const Sysfs& sysfs, std::string_view netdev);

// NCCL's speed table: lanes from ibv active_width bits, per-lane Mbps from active_speed(_ex) bits.
int width_from_ibv(int active_width_bits);    // 1→1, 2→4, 4→8, 8→12, 16→2; 0 otherwise
int lane_mbps_from_ibv(uint32_t speed_bits);  // 1 SDR 2500 ... 256 XDR 200000; 0 otherwise
// The speed bits NCCL reads: active_speed_ex (rdma-core >= 48, the only field that can say XDR) when
// non-zero, else active_speed.
uint32_t speed_bits_from_ibv(uint32_t active_speed, uint32_t active_speed_ex);
// A port's speed in Mbps (lanes × per-lane rate) as NCCL reports it; what Port::speed_mbps holds
// after verbs discovery and what the net plugin reports to NCCL. 0 when either field is unknown.
int64_t port_speed_mbps(int active_width_bits, uint32_t active_speed, uint32_t active_speed_ex);
// Mbps from sysfs "rate" text ("100 Gb/sec (4X EDR)", "2.5 Gb/sec (1X SDR)"); 0 on garbage.
int64_t mbps_from_rate_text(std::string_view text);

}  // namespace railscope::node
