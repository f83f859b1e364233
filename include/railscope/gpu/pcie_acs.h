// SPDX-License-Identifier: Apache-2.0
// PCIe Access Control Services on a bridge/port, read from its configuration space
// (/sys/bus/pci/devices/<bdf>/config). ACS P2P Request/Completion Redirect sends peer-to-peer
// traffic (NIC -> GPU memory) up to the root complex, which breaks or slows GPUDirect RDMA.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "railscope/gpu/sysfs_root.h"

namespace railscope::gpu {

inline constexpr uint16_t kPciExtCapAcs = 0x000D;
inline constexpr uint16_t kAcsCtrlSourceValidation = 1u << 0;
inline constexpr uint16_t kAcsCtrlTranslationBlocking = 1u << 1;
inline constexpr uint16_t kAcsCtrlRequestRedirect = 1u << 2;
inline constexpr uint16_t kAcsCtrlCompletionRedirect = 1u << 3;
inline constexpr uint16_t kAcsCtrlUpstreamForwarding = 1u << 4;
inline constexpr uint16_t kAcsCtrlEgressControl = 1u << 5;
inline constexpr uint16_t kAcsCtrlDirectTranslatedP2p = 1u << 6;

enum class AcsState {
  Unreadable,    // no config file
  NeedsRoot,     // only the 64-byte header is readable (unprivileged read of sysfs config)
  NoCapability,  // no ACS extended capability (nothing to redirect)
  Off,           // capability present, no redirect bits set
  Redirect,      // Request Redirect and/or Completion Redirect set
};
std::string_view to_string(AcsState s);

struct AcsStatus {
  AcsState state = AcsState::Unreadable;
  uint16_t offset = 0;      // of the ACS capability in config space
  uint16_t capability = 0;  // ACS Capability register
  uint16_t control = 0;     // ACS Control register
  bool request_redirect() const { return (control & kAcsCtrlRequestRedirect) != 0; }
  bool completion_redirect() const { return (control & kAcsCtrlCompletionRedirect) != 0; }
  std::string describe() const;  // e.g. "ACS ctrl 0x001d: ReqRedir CmpltRedir"
};

// Walks the extended capability list (from offset 0x100) of a config-space image.
AcsStatus parse_acs(std::span<const uint8_t> config);
AcsStatus read_acs(const SysfsRoot& fs, const std::string& bdf);

}  // namespace railscope::gpu
