// SPDX-License-Identifier: Apache-2.0
// Link health of a node's RDMA ports: each port's trained speed and width against what it can do and
// against its siblings, the rails that are down while their siblings run, and the link error counters
// that are not zero since boot. The first step of the troubleshooting order in docs/fabric-health.md;
// used by `railscope doctor` (link section) and by whoever must name a rail that is already down or
// degraded when a job starts.
//
// Capability: for RoCE the netdev's supported link modes (ETHTOOL_GLINKSETTINGS, ethtool_stats.h); the
// kernel publishes no capability for an InfiniBand port (sysfs has only the trained `rate`), so there the
// siblings are the reference. Siblings: the node's other ports of the same link layer on the same NIC
// model (PCI device id; a 100G storage NIC is not a sibling of the 400G compute NICs).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "railscope/core/diagnosis.h"
#include "railscope/node/inventory.h"
#include "railscope/node/port_counters.h"

namespace railscope::node {

class EthtoolSource;
class Sysfs;

// sysfs `rate`: "400 Gb/sec (4X NDR)", "25 Gb/sec (1X EDR)", "2.5 Gb/sec (1X SDR)" (the kernel's
// rate_show() in drivers/infiniband/core/sysfs.c prints "<rate> Gb/sec (<width>X <speed>)").
struct RateText {
  int64_t mbps = 0;  // 0 = unknown
  int width = 0;     // lanes; 0 = unknown
  std::string lane;  // "NDR", "HDR" ...; empty = unknown
};
RateText parse_rate_text(std::string_view text);
// "SDR" ... "XDR" for a per-lane rate in Mbps (lib/node's speed table); empty when unknown.
std::string_view lane_name(int lane_mbps);

struct PortLink {
  std::string device;
  int port = 0;
  LinkLayer link_layer = LinkLayer::Unknown;
  PortState state = PortState::Unknown;
  int phys_state = 0;
  std::string model;  // the device's PCI device id ("0x1021" ConnectX-7), the sibling key
  bool selected = true;
  int width = 0;
  std::string lane;
  int64_t speed_mbps = 0;
  int64_t capable_mbps = 0;   // fastest supported link mode (RoCE, from ethtool); 0 = not said
  int64_t siblings_mbps = 0;  // fastest ACTIVE sibling (same link layer and model); 0 = no sibling
  int siblings = 0;           // other ports of the same kind
  int siblings_active = 0;    // of which ACTIVE
  std::vector<std::pair<std::string, uint64_t>> errors_since_boot;  // link counters not zero
  std::string verdict;  // ok, degraded, below_capability, rail_down, down, unknown
};

struct LinkHealth {
  std::vector<PortLink> ports;
  std::vector<diag::Finding> findings;  // for selected ports only
};

// Which ports count for findings (NCCL_IB_HCA); all when empty.
using PortFilter = std::function<bool(const Device&, const Port&)>;

// Reads each port's link counters (counters/, hw_counters/ and, for RoCE, the netdev's ethtool
// statistics through `ethtool`, which may be null) and compares the ports. Findings: link.degraded,
// link.below_capability, link.rail_down, link.downed_since_boot, link.errors_since_boot.
LinkHealth check_link_health(const Inventory& inventory, const Sysfs& sysfs, EthtoolSource* ethtool,
                             const PortFilter& selected = {});

// Link counters (category link) of a snapshot that are not zero, by name (link_downed, symbol_error,
// link_down_events_phy ...; the FEC-corrected and pre-FEC counters are not link trouble).
std::vector<std::pair<std::string, uint64_t>> nonzero_link_counters(const PortCounters& counters);

// The link counters that rose between two snapshots of a port: link.flapping when the link went down
// (link_downed, link_down_events_phy, link_error_recovery), link.errors_rising for the other link errors.
std::vector<diag::Finding> link_findings_between(const PortCounters& before, const PortCounters& after,
                                                 double seconds);

}  // namespace railscope::node
