// SPDX-License-Identifier: Apache-2.0
// A netdev's ethtool statistics and link settings, read the way `ethtool -S <if>` and `ethtool <if>` read
// them (the SIOCETHTOOL ioctl: ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS, ETHTOOL_GSTATS, ETHTOOL_GLINKSETTINGS;
// include/uapi/linux/ethtool.h), without the ethtool binary. On mlx5 the per-priority PFC pause counters,
// the physical-port error counters and the discards of a RoCE port live there, not under hw_counters/.
//
// The source is an interface so that tests need no NIC: the ioctl source answers for the real node, the
// fixture source reads what `ethtool` would print from files under the sysfs root:
//   <root>/railscope-fixture/ethtool/<ifname>/stats   `ethtool -S <ifname>` output ("  name: value" lines)
//   <root>/railscope-fixture/ethtool/<ifname>/link    `ethtool <ifname>` output ("Speed: 400000Mb/s",
//                                                     "Supported link modes: 400000baseCR4/Full ...")
// A netdev without ethtool statistics (rxe's veth has a few, a missing interface none) is "not
// available": empty answers, never an error.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "railscope/node/port_counters.h"

namespace railscope::node {

class Sysfs;

struct EthtoolLinkSettings {
  int64_t speed_mbps = 0;              // current speed; 0 = unknown (link down: SPEED_UNKNOWN)
  int64_t max_supported_mbps = 0;      // fastest supported link mode; 0 = the device does not say (veth)
  std::vector<std::string> supported;  // link mode names as ethtool prints them, "400000baseCR4/Full"
};

class EthtoolSource {
 public:
  virtual ~EthtoolSource() = default;
  // Names of the netdev's statistics (ETH_SS_STATS), in the order stat_values() returns them; empty when
  // the netdev has none or does not exist.
  virtual std::vector<std::string> stat_names(const std::string& ifname) = 0;
  // All statistics' values; nullopt when unreadable or when the device now has a different number of
  // statistics than `expected` (its channels changed: read the names again).
  virtual std::optional<std::vector<uint64_t>> stat_values(const std::string& ifname, size_t expected) = 0;
  // nullopt when the netdev does not answer.
  virtual std::optional<EthtoolLinkSettings> link_settings(const std::string& ifname) = 0;
};

// The SIOCETHTOOL ioctl on an AF_INET datagram socket (no privilege needed to read).
std::unique_ptr<EthtoolSource> make_ioctl_ethtool_source();
// Files laid out as the header comment says, under `dir` (= <root>/railscope-fixture/ethtool).
std::unique_ptr<EthtoolSource> make_fixture_ethtool_source(std::string dir);
// The ioctl for the real /sys; the fixture folder under any other sysfs root (a fake node has no netdevs
// of its own to ask).
std::unique_ptr<EthtoolSource> ethtool_source_for(const Sysfs& sysfs);

// Mbps of a link mode name ("400000baseCR4/Full" → 400000, "10baseT/Half" → 10); 0 when it names no
// speed ("Autoneg", "FIBRE", "Pause").
int64_t link_mode_mbps(std::string_view mode);

// Whether a statistic describes the whole port rather than one of the host stack's queues: mlx5 prints
// hundreds of per-channel ring statistics (rx0_packets, tx12_xmit_more, ch3_arm, ptp_*, qos_tx0_*) that
// say nothing of the fabric; they are left out so a snapshot stays small.
bool is_port_wide_stat(std::string_view name);

// A plain interface name (not empty, < IFNAMSIZ, no '/', not "." or "..").
bool valid_ifname(std::string_view ifname);

// The port-wide statistics of a netdev as counters (source Ethtool, category from the one table), sorted
// by name; empty when not available. Reads names and values once (for repeated snapshots use PortSampler).
std::vector<Counter> read_ethtool_counters(EthtoolSource& source, const std::string& ifname);

}  // namespace railscope::node
