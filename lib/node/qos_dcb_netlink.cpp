// SPDX-License-Identifier: Apache-2.0
// DCB through rtnetlink: RTM_GETDCB requests and a defensive parser of the kernel's answers.
//
// Request: struct nlmsghdr, struct dcbmsg {family AF_UNSPEC, cmd}, attribute DCB_ATTR_IFNAME (a
// NUL-terminated string), as iproute2's dcb(8) sends it. The kernel (net/dcb/dcbnl.c, dcb_doit) answers
// with an RTM_GETDCB message of the same command, or NLMSG_ERROR (-ENODEV for an unknown name,
// -EOPNOTSUPP when the netdev has no dcbnl_ops). DCB_CMD_IEEE_GET's answer (dcbnl_ieee_fill) holds
// DCB_ATTR_IFNAME, the nested DCB_ATTR_IEEE with DCB_ATTR_IEEE_PFC (struct ieee_pfc) and
// DCB_ATTR_IEEE_APP_TABLE (nested DCB_ATTR_IEEE_APP / DCB_ATTR_DCB_APP, each a struct dcb_app), and
// DCB_ATTR_DCBX (u8) when the driver has getdcbx. DCB_CMD_GDCBX answers DCB_ATTR_DCBX alone.
//
// Everything the kernel writes is copied before use (memcpy into local structs, no aliasing of the
// buffer), every length is checked against what is left, and every loop advances by at least the
// 4-byte header, so a malformed answer ends as "unknown", never as a read out of bounds.
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "railscope/node/qos_dcb.h"
#include "railscope/node/sysfs.h"

namespace railscope::node {
namespace {

// Linux 6.5 added DCB_ATTR_DCB_APP (= DCB_ATTR_IEEE_APP + 1) for entries of non-IEEE selectors
// (pcp-prio); older uapi headers lack the name, the value is fixed by the ABI.
constexpr uint16_t kAttrDcbApp = DCB_ATTR_IEEE_APP + 1;
constexpr size_t kRecvBuffer = 32 * 1024;  // one answer is < 2 KiB (64 DSCP entries are 512 bytes)
constexpr int kMaxDatagrams = 16;          // answers to others' requests on this socket: none expected

using Bytes = std::span<const uint8_t>;

// Calls fn(type, payload) for each attribute of data; false at the first one whose length does not fit.
template <class Fn>
bool for_each_attr(Bytes data, Fn&& fn) {
  size_t off = 0;
  while (data.size() - off >= NLA_HDRLEN) {
    nlattr h{};
    std::memcpy(&h, data.data() + off, sizeof h);
    if (h.nla_len < NLA_HDRLEN || h.nla_len > data.size() - off) return false;
    fn(static_cast<uint16_t>(h.nla_type & NLA_TYPE_MASK),
       data.subspan(off + NLA_HDRLEN, h.nla_len - NLA_HDRLEN));
    const size_t step = NLA_ALIGN(h.nla_len);
    if (step >= data.size() - off) break;
    off += step;
  }
  return true;
}

void malformed(DcbState& state, std::string_view what) {
  state.status = DcbStatus::Unknown;
  state.reason = fmt::format("malformed DCB netlink answer ({})", what);
}

bool parse_app_table(Bytes table, DcbState& state) {
  return for_each_attr(table, [&](uint16_t type, Bytes payload) {
    if (type != DCB_ATTR_IEEE_APP && type != kAttrDcbApp) return;
    if (payload.size() < sizeof(dcb_app) || state.apps.size() >= kMaxDcbApps) return;
    dcb_app app{};
    std::memcpy(&app, payload.data(), sizeof app);
    state.apps.push_back({app.selector, app.priority, app.protocol});
  });
}

bool parse_ieee(Bytes ieee, DcbState& state) {
  bool ok = true;
  const bool well_formed = for_each_attr(ieee, [&](uint16_t type, Bytes payload) {
    if (type == DCB_ATTR_IEEE_PFC) {
      // pfc_cap and pfc_en are the first two bytes of struct ieee_pfc; copy what is there.
      ieee_pfc pfc{};
      if (payload.size() < offsetof(ieee_pfc, pfc_en) + 1) {
        ok = false;
        return;
      }
      std::memcpy(&pfc, payload.data(), std::min(payload.size(), sizeof pfc));
      state.pfc_cap = pfc.pfc_cap;
      state.pfc_en = pfc.pfc_en;
    } else if (type == DCB_ATTR_IEEE_APP_TABLE) {
      ok = ok && parse_app_table(payload, state);
    }
  });
  return ok && well_formed;
}

// The attributes after struct dcbmsg of an RTM_GETDCB answer.
void parse_answer(Bytes attrs, DcbState& state) {
  state.status = DcbStatus::Ok;
  state.reason.clear();
  bool nested_ok = true;
  const bool well_formed = for_each_attr(attrs, [&](uint16_t type, Bytes payload) {
    if (type == DCB_ATTR_IEEE) {
      nested_ok = nested_ok && parse_ieee(payload, state);
    } else if (type == DCB_ATTR_DCBX && !payload.empty()) {
      state.dcbx = payload[0];
    }
  });
  if (!well_formed || !nested_ok) malformed(state, "attribute lengths");
}

void set_error(DcbState& state, int err) {
  if (err == EOPNOTSUPP) {
    state.status = DcbStatus::NotSupported;
    state.reason = "the device has no DCB support (EOPNOTSUPP)";
  } else if (err == ENODEV) {
    state.status = DcbStatus::NoDevice;
    state.reason = "no such network interface (ENODEV)";
  } else {
    state.status = DcbStatus::Unknown;
    state.reason = fmt::format("DCB netlink request failed: {}", std::strerror(err));
  }
}

class FdGuard {
 public:
  explicit FdGuard(int fd) : fd_(fd) {}
  ~FdGuard() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdGuard(const FdGuard&) = delete;
  FdGuard& operator=(const FdGuard&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// One request and its answer on a fresh socket.
void ask(uint8_t cmd, std::string_view ifname, DcbState& state) {
  static constexpr uint32_t kSeq = 1;
  const auto request = build_dcb_request(cmd, ifname, kSeq);
  if (request.empty()) {
    state.status = DcbStatus::Unknown;
    state.reason = "not a valid interface name";
    return;
  }
  FdGuard fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (fd.get() < 0) {
    set_error(state, errno);
    return;
  }
  timeval tv{1, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd.get(), request.data(), request.size(), 0, reinterpret_cast<const sockaddr*>(&kernel),
               sizeof kernel) != static_cast<ssize_t>(request.size())) {
    set_error(state, errno);
    return;
  }
  std::vector<uint8_t> buffer(kRecvBuffer);
  for (int i = 0; i < kMaxDatagrams; ++i) {
    sockaddr_nl from{};
    socklen_t from_len = sizeof from;
    const ssize_t n = ::recvfrom(fd.get(), buffer.data(), buffer.size(), MSG_TRUNC,
                                 reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 0) {
      if (errno == EINTR) continue;
      set_error(state, errno);  // EAGAIN after the timeout
      return;
    }
    if (static_cast<size_t>(n) > buffer.size()) {
      malformed(state, "answer larger than the receive buffer");
      return;
    }
    if (from.nl_pid != 0) continue;  // only the kernel answers
    if (parse_dcb_datagram(Bytes(buffer.data(), static_cast<size_t>(n)), kSeq, cmd, state)) return;
  }
  state.status = DcbStatus::Unknown;
  state.reason = "no answer to the DCB netlink request";
}

class NetlinkDcbSource final : public DcbSource {
 public:
  DcbState read(std::string_view netdev) const override {
    DcbState state;
    ask(DCB_CMD_IEEE_GET, netdev, state);
    if (state.status == DcbStatus::Ok && !state.dcbx) {
      DcbState dcbx;
      ask(DCB_CMD_GDCBX, netdev, dcbx);
      if (dcbx.status == DcbStatus::Ok) state.dcbx = dcbx.dcbx;  // EOPNOTSUPP here: no getdcbx, unknown
    }
    return state;
  }
};

}  // namespace

std::vector<uint8_t> build_dcb_request(uint8_t cmd, std::string_view ifname, uint32_t seq) {
  if (ifname.empty() || ifname.size() >= IFNAMSIZ || ifname.find('/') != std::string_view::npos ||
      ifname.find('\0') != std::string_view::npos)
    return {};
  const size_t name_len = ifname.size() + 1;  // with the NUL, as NLA_NUL_STRING wants
  const size_t attrs_off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(dcbmsg));
  const size_t total = attrs_off + NLA_ALIGN(NLA_HDRLEN + name_len);
  std::vector<uint8_t> out(total, 0);
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(total);
  h.nlmsg_type = RTM_GETDCB;
  h.nlmsg_flags = NLM_F_REQUEST;
  h.nlmsg_seq = seq;
  std::memcpy(out.data(), &h, sizeof h);
  dcbmsg d{};
  d.dcb_family = AF_UNSPEC;
  d.cmd = cmd;
  std::memcpy(out.data() + NLMSG_HDRLEN, &d, sizeof d);
  nlattr a{};
  a.nla_len = static_cast<uint16_t>(NLA_HDRLEN + name_len);
  a.nla_type = DCB_ATTR_IFNAME;
  std::memcpy(out.data() + attrs_off, &a, sizeof a);
  std::memcpy(out.data() + attrs_off + NLA_HDRLEN, ifname.data(), ifname.size());
  return out;
}

bool parse_dcb_datagram(Bytes datagram, uint32_t seq, uint8_t cmd, DcbState& state) {
  size_t off = 0;
  while (datagram.size() - off >= sizeof(nlmsghdr)) {
    nlmsghdr h{};
    std::memcpy(&h, datagram.data() + off, sizeof h);
    if (h.nlmsg_len < sizeof h || h.nlmsg_len > datagram.size() - off) {
      if (h.nlmsg_seq == seq) {
        malformed(state, "message length");
        return true;
      }
      return false;
    }
    const Bytes payload =
        datagram.subspan(off + NLMSG_HDRLEN, h.nlmsg_len - std::min<size_t>(h.nlmsg_len, NLMSG_HDRLEN));
    if (h.nlmsg_seq == seq) {
      if (h.nlmsg_type == NLMSG_ERROR) {
        if (payload.size() < sizeof(int)) {
          malformed(state, "short error message");
          return true;
        }
        int error = 0;
        std::memcpy(&error, payload.data(), sizeof error);
        if (error == 0) {  // an ACK without an answer: nothing to report
          state.status = DcbStatus::Unknown;
          state.reason = "the kernel acknowledged the DCB request without an answer";
        } else {
          set_error(state, -error);
        }
        return true;
      }
      if (h.nlmsg_type == RTM_GETDCB) {
        if (payload.size() < sizeof(dcbmsg)) {
          malformed(state, "short dcbmsg");
          return true;
        }
        dcbmsg d{};
        std::memcpy(&d, payload.data(), sizeof d);
        if (d.cmd == cmd) {
          const size_t attrs = std::min(payload.size(), static_cast<size_t>(NLMSG_ALIGN(sizeof(dcbmsg))));
          parse_answer(payload.subspan(attrs), state);
          return true;
        }
      }
    }
    const size_t step = NLMSG_ALIGN(h.nlmsg_len);
    if (step >= datagram.size() - off) break;
    off += step;
  }
  return false;
}

std::unique_ptr<DcbSource> make_netlink_dcb_source() { return std::make_unique<NetlinkDcbSource>(); }

std::unique_ptr<DcbSource> make_dcb_source(const Sysfs& sysfs) {
  if (sysfs.is_real()) return make_netlink_dcb_source();
  return make_fixture_dcb_source(sysfs.root());
}

}  // namespace railscope::node
