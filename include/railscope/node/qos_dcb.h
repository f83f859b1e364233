// SPDX-License-Identifier: Apache-2.0
// The DCB (Data Center Bridging) state of a netdev: which priorities have PFC, the APP table (DSCP →
// priority entries when the port trusts DSCP), and who runs DCBX. Read as `dcb ieee show`/`dcb app show`
// (iproute2) and `lldptool` read it: rtnetlink RTM_GETDCB with DCB_CMD_IEEE_GET and DCB_CMD_GDCBX
// (include/uapi/linux/dcbnl.h; the kernel side is net/dcb/dcbnl.c). No vendor tool, no libnl.
//
// Where a netdev has no DCB operations (veth, the netdev behind rxe/siw, most virtual devices) the kernel
// answers EOPNOTSUPP (dcb_doit: `if (!netdev->dcbnl_ops) return -EOPNOTSUPP`), and ENODEV for an unknown
// name: the state is then NotSupported / NoDevice, which doctor reports as "not available on this device".
//
// Everything is behind DcbSource so tests answer from fixture files instead of the kernel: with the real
// /sys the source is netlink; with any other sysfs root it reads <root>/railscope-fixture/dcb/<netdev>
// (format below, parse_dcb_fixture), so a fake tree never asks this host's kernel about its netdevs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace railscope::node {

class Sysfs;

// IEEE 802.1Qaz APP selectors (IEEE_8021QAZ_APP_SEL_* in dcbnl.h); 255 is the kernel's DCB_APP_SEL_PCP
// (pcp-prio entries, Linux 6.5+, reported as DCB_ATTR_DCB_APP).
inline constexpr uint8_t kAppSelEthertype = 1;
inline constexpr uint8_t kAppSelStream = 2;
inline constexpr uint8_t kAppSelDgram = 3;
inline constexpr uint8_t kAppSelAny = 4;
inline constexpr uint8_t kAppSelDscp = 5;
inline constexpr uint8_t kAppSelPcp = 255;

struct DcbApp {
  uint8_t selector = 0;
  uint8_t priority = 0;
  uint16_t protocol = 0;  // the DSCP value for kAppSelDscp, the UDP port for kAppSelDgram, ...
  bool operator==(const DcbApp&) const = default;
};

enum class DcbStatus {
  Ok,            // the device answered (fields below may still be absent: the driver lacks that op)
  NotSupported,  // EOPNOTSUPP: no DCB on this device
  NoDevice,      // ENODEV: no netdev of that name
  Unknown,       // could not ask or the answer was unusable (reason says why)
};
std::string_view to_string(DcbStatus s);

struct DcbState {
  DcbStatus status = DcbStatus::Unknown;
  std::string reason;              // why it is not Ok, one phrase
  std::optional<uint8_t> pfc_cap;  // priorities that can have PFC at once (struct ieee_pfc pfc_cap)
  std::optional<uint8_t> pfc_en;   // bit p set: PFC on priority p (struct ieee_pfc pfc_en)
  std::vector<DcbApp> apps;        // the APP table, in the kernel's order; at most kMaxDcbApps kept
  std::optional<uint8_t> dcbx;     // DCB_CAP_DCBX_* bits (DCB_ATTR_DCBX)
};
inline constexpr size_t kMaxDcbApps = 1024;

// "host,ieee" / "lld-managed,cee" ... from DCB_CAP_DCBX_* bits; "none" for 0.
std::string dcbx_text(uint8_t dcbx);
// "dscp", "pcp", "ethtype", "stream", "dgram", "any", or the number.
std::string app_selector_text(uint8_t selector);

class DcbSource {
 public:
  virtual ~DcbSource() = default;
  virtual DcbState read(std::string_view netdev) const = 0;
};

// The kernel, through a NETLINK_ROUTE socket (one request per command, 1 s receive timeout).
std::unique_ptr<DcbSource> make_netlink_dcb_source();
// Files <root>/railscope-fixture/dcb/<netdev>; a missing file is Unknown ("no DCB fixture").
std::unique_ptr<DcbSource> make_fixture_dcb_source(std::string sysfs_root);
// netlink for the real /sys, fixture files for any other root.
std::unique_ptr<DcbSource> make_dcb_source(const Sysfs& sysfs);

// --- the pieces, exposed for tests

// RTM_GETDCB request for cmd (DCB_CMD_IEEE_GET, DCB_CMD_GDCBX) on ifname; empty when the name is not
// a valid interface name (empty, longer than IFNAMSIZ-1, or containing '/' or NUL).
std::vector<uint8_t> build_dcb_request(uint8_t cmd, std::string_view ifname, uint32_t seq);

// One datagram read from the socket after a request with sequence seq and command cmd. Fills state from
// the reply to it (status Ok and the attributes it carries, or the errno of an NLMSG_ERROR) and returns
// true; false when the datagram holds no answer to that request (other sequence, other type). A
// malformed message or attribute (lengths that do not fit) makes status Unknown with a reason.
bool parse_dcb_datagram(std::span<const uint8_t> datagram, uint32_t seq, uint8_t cmd, DcbState& state);

// The fixture format, one `key=value` a line, '#' starts a comment:
//   result=ok | EOPNOTSUPP | ENODEV | <other text: Unknown with that reason>   (required)
//   pfc_cap=8
//   pfc_en=3,4 | none              priorities with PFC on
//   app=dscp,26,3                  selector (name or number), protocol, priority; one line per entry
//   dcbx=host,ieee | 0x0a           DCB_CAP_DCBX_* names or a number
// Bad lines make the state Unknown with the line number in the reason.
DcbState parse_dcb_fixture(std::string_view text);

}  // namespace railscope::node
