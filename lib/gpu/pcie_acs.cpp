// SPDX-License-Identifier: Apache-2.0
// ACS extended capability parsing. The extended capability list starts at 0x100; each header is a
// little-endian dword: id (bits 0-15), version (16-19), next offset (20-31). The ACS capability holds
// its Capability register at +4 and its Control register at +6 (both 16 bits).
#include "railscope/gpu/pcie_acs.h"

#include <fmt/format.h>

namespace railscope::gpu {
namespace {

constexpr size_t kExtConfigStart = 0x100;
constexpr size_t kExtConfigEnd = 0x1000;

uint32_t le32(std::span<const uint8_t> b, size_t off) {
  return static_cast<uint32_t>(b[off]) | static_cast<uint32_t>(b[off + 1]) << 8 |
         static_cast<uint32_t>(b[off + 2]) << 16 | static_cast<uint32_t>(b[off + 3]) << 24;
}
uint16_t le16(std::span<const uint8_t> b, size_t off) {
  return static_cast<uint16_t>(b[off] | b[off + 1] << 8);
}

}  // namespace

std::string_view to_string(AcsState s) {
  switch (s) {
    case AcsState::Unreadable: return "unreadable";
    case AcsState::NeedsRoot: return "unknown (config space needs root)";
    case AcsState::NoCapability: return "no ACS capability";
    case AcsState::Off: return "off";
    case AcsState::Redirect: return "redirect";
  }
  return "?";
}

std::string AcsStatus::describe() const {
  if (state != AcsState::Off && state != AcsState::Redirect) return std::string(to_string(state));
  std::string bits;
  if (request_redirect()) bits += " ReqRedir";
  if (completion_redirect()) bits += " CmpltRedir";
  if (control & kAcsCtrlSourceValidation) bits += " SrcValid";
  if (control & kAcsCtrlUpstreamForwarding) bits += " UpstreamFwd";
  if (control & kAcsCtrlEgressControl) bits += " EgressCtrl";
  if (control & kAcsCtrlDirectTranslatedP2p) bits += " DirectTrans";
  return fmt::format("ACS ctrl {:#06x}:{}", control, bits.empty() ? std::string(" none") : bits);
}

AcsStatus parse_acs(std::span<const uint8_t> config) {
  AcsStatus st;
  if (config.empty()) return st;
  if (config.size() < kExtConfigStart + 4) {
    st.state = AcsState::NeedsRoot;
    return st;
  }
  size_t off = kExtConfigStart;
  // Each capability is at least one dword and offsets are dword aligned: at most 960 entries.
  for (int guard = 0; guard < 1024 && off != 0; ++guard) {
    if (off < kExtConfigStart || off + 8 > config.size() || off + 8 > kExtConfigEnd || (off & 3) != 0) break;
    uint32_t header = le32(config, off);
    if (header == 0 || header == 0xffffffffu) break;
    if ((header & 0xffffu) == kPciExtCapAcs) {
      st.offset = static_cast<uint16_t>(off);
      st.capability = le16(config, off + 4);
      st.control = le16(config, off + 6);
      st.state = (st.request_redirect() || st.completion_redirect()) ? AcsState::Redirect : AcsState::Off;
      return st;
    }
    off = header >> 20;
  }
  st.state = AcsState::NoCapability;
  return st;
}

AcsStatus read_acs(const SysfsRoot& fs, const std::string& bdf) {
  auto bytes = fs.read_bytes("/sys/bus/pci/devices/" + bdf + "/config", kExtConfigEnd);
  if (!bytes) return {};
  if (bytes->empty()) return {};
  return parse_acs(*bytes);
}

}  // namespace railscope::gpu
