// SPDX-License-Identifier: Apache-2.0
// Which network interfaces the TCP engine uses, chosen the way NCCL's socket transport chooses them:
// NCCL_SOCKET_IFNAME (comma-separated name prefixes; a leading `^` excludes them, a leading `=`
// wants exact names, `^=` both), NCCL_SOCKET_FAMILY (AF_INET / AF_INET6), and when the variable is
// unset: `ib*` interfaces first, else anything but docker*/lo*/virbr*, else docker*, else loopback.
// Loopback is used only when it is named or nothing else qualifies. IPv6 link-local addresses are
// skipped (they need a scope id the handle does not carry). At most kMaxInterfaces devices.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/net/transport.h"

namespace railscope::net::tcp {

inline constexpr size_t kMaxInterfaces = 16;
inline constexpr int kDefaultSpeedMbps = 10000;  // when sysfs has no speed (virtual or down links)

// One address of one interface, as getifaddrs lists it.
struct IfAddr {
  std::string name;
  int family = 4;  // 4 or 6
  std::array<uint8_t, 16> addr{};
  bool loopback = false;
  bool up = true;
  bool link_local = false;  // IPv6 fe80::/10
};

// A selected interface: one device of the engine.
struct NetInterface {
  IfAddr ip;
  int speed_mbps = kDefaultSpeedMbps;
  std::string pci_path;  // empty when the netdev has no device link
  int mtu = 0;
};

// NCCL's interface-name list syntax.
struct IfNameFilter {
  bool exclude = false;
  bool exact = false;
  std::vector<std::string> names;
  bool matches(std::string_view ifname) const;
  bool names_explicitly(std::string_view ifname) const;  // an inclusion list that lists it
};
IfNameFilter parse_ifname_filter(std::string_view spec);

// The family NCCL_SOCKET_FAMILY asks for: 4, 6, or 0 (either); nullopt and *why for other values.
std::optional<int> parse_family(std::string_view value, std::string* why);

// Pure selection over an address list (tests feed their own lists). ifname: NCCL_SOCKET_IFNAME.
std::vector<IfAddr> select_interfaces(const std::vector<IfAddr>& all,
                                      const std::optional<std::string>& ifname, int family);

// The machine's addresses (getifaddrs).
std::vector<IfAddr> list_addresses();
// Speed, PCI path and MTU from <sysfs root>/class/net/<name>/ (RAILSCOPE_SYSFS_ROOT, default /sys).
NetInterface describe_interface(const IfAddr& ip);

// Everything above with the environment: the engine's devices, or device.none-like failure
// (tcp.no_interface) naming what was looked for.
Status discover_interfaces(std::vector<NetInterface>* out);

std::string address_text(const IfAddr& ip);

}  // namespace railscope::net::tcp
