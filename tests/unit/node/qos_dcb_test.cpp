// SPDX-License-Identifier: Apache-2.0
// The DCB reader: the RTM_GETDCB request, the parser of the kernel's answers (well-formed, error, other
// sequence, and every truncation of a real-shaped answer), the fixture format, and the netlink source
// against this host's kernel (loopback has no DCB operations: EOPNOTSUPP; an unknown name: ENODEV).
#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "railscope/node/qos_dcb.h"

using namespace railscope::node;

namespace {

// Builds netlink messages the way the kernel lays them out (net/dcb/dcbnl.c, dcbnl_ieee_fill).
class Msg {
 public:
  explicit Msg(uint16_t type, uint32_t seq) {
    nlmsghdr h{};
    h.nlmsg_type = type;
    h.nlmsg_seq = seq;
    append(&h, sizeof h);
  }
  void dcb(uint8_t cmd) {
    dcbmsg d{};
    d.cmd = cmd;
    append(&d, sizeof d);
  }
  void error(int err) {
    nlmsgerr e{};
    e.error = -err;
    append(&e, sizeof e);
  }
  // Opens an attribute; close() fixes its length. Nested attributes are opened inside.
  size_t open(uint16_t type) {
    pad();
    const size_t at = bytes_.size();
    nlattr a{};
    a.nla_type = type;
    append(&a, sizeof a);
    return at;
  }
  void close(size_t at) {
    const auto len = static_cast<uint16_t>(bytes_.size() - at);
    std::memcpy(bytes_.data() + at, &len, sizeof len);
  }
  void attr(uint16_t type, const void* data, size_t n) {
    const size_t at = open(type);
    append(data, n);
    close(at);
  }
  std::vector<uint8_t> done() {
    pad();
    const auto len = static_cast<uint32_t>(bytes_.size());
    std::memcpy(bytes_.data(), &len, sizeof len);
    return bytes_;
  }

 private:
  void append(const void* p, size_t n) {
    const size_t at = bytes_.size();
    bytes_.resize(at + n);
    std::memcpy(bytes_.data() + at, p, n);
  }
  void pad() {
    while (bytes_.size() % 4) bytes_.push_back(0);
  }
  std::vector<uint8_t> bytes_;
};

// A ConnectX-7 answer to DCB_CMD_IEEE_GET with trust dscp and PFC on priority 3: all 64 DSCP entries
// (mlx5 fills them when trust is dscp; its default map is DSCP d → priority d >> 3), DCBX host+IEEE.
std::vector<uint8_t> cx7_answer(uint32_t seq) {
  Msg m(RTM_GETDCB, seq);
  m.dcb(DCB_CMD_IEEE_GET);
  m.attr(DCB_ATTR_IFNAME, "eth2", 5);
  const size_t ieee = m.open(DCB_ATTR_IEEE);
  ieee_ets ets{};
  m.attr(DCB_ATTR_IEEE_ETS, &ets, sizeof ets);
  ieee_pfc pfc{};
  pfc.pfc_cap = 8;
  pfc.pfc_en = 1u << 3;
  m.attr(DCB_ATTR_IEEE_PFC, &pfc, sizeof pfc);
  const size_t table = m.open(DCB_ATTR_IEEE_APP_TABLE);
  for (uint16_t d = 0; d < 64; ++d) {
    dcb_app app{};
    app.selector = IEEE_8021QAZ_APP_SEL_DSCP;
    app.protocol = d;
    app.priority = static_cast<uint8_t>(d >> 3);
    m.attr(DCB_ATTR_IEEE_APP, &app, sizeof app);
  }
  m.close(table);
  m.close(ieee);
  const uint8_t dcbx = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
  m.attr(DCB_ATTR_DCBX, &dcbx, 1);
  return m.done();
}

std::vector<uint8_t> error_answer(uint32_t seq, int err) {
  Msg m(NLMSG_ERROR, seq);
  m.error(err);
  return m.done();
}

}  // namespace

TEST(DcbRequest, LayoutIsWhatTheKernelParses) {
  const auto req = build_dcb_request(DCB_CMD_IEEE_GET, "eth2", 7);
  ASSERT_EQ(req.size(), NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(dcbmsg)) + NLA_ALIGN(NLA_HDRLEN + 5));
  nlmsghdr h{};
  std::memcpy(&h, req.data(), sizeof h);
  EXPECT_EQ(h.nlmsg_len, req.size());
  EXPECT_EQ(h.nlmsg_type, RTM_GETDCB);
  EXPECT_EQ(h.nlmsg_flags, NLM_F_REQUEST);
  EXPECT_EQ(h.nlmsg_seq, 7u);
  dcbmsg d{};
  std::memcpy(&d, req.data() + NLMSG_HDRLEN, sizeof d);
  EXPECT_EQ(d.cmd, DCB_CMD_IEEE_GET);
  EXPECT_EQ(d.dcb_family, AF_UNSPEC);
  nlattr a{};
  const size_t at = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(dcbmsg));
  std::memcpy(&a, req.data() + at, sizeof a);
  EXPECT_EQ(a.nla_type, DCB_ATTR_IFNAME);
  EXPECT_EQ(a.nla_len, NLA_HDRLEN + 5);
  EXPECT_STREQ(reinterpret_cast<const char*>(req.data() + at + NLA_HDRLEN), "eth2");
}

TEST(DcbRequest, RefusesNamesTheKernelWouldNot) {
  EXPECT_TRUE(build_dcb_request(DCB_CMD_IEEE_GET, "", 1).empty());
  EXPECT_TRUE(build_dcb_request(DCB_CMD_IEEE_GET, "a/b", 1).empty());
  EXPECT_TRUE(build_dcb_request(DCB_CMD_IEEE_GET, "0123456789abcdef", 1).empty());  // 16 > IFNAMSIZ-1
  EXPECT_TRUE(build_dcb_request(DCB_CMD_IEEE_GET, std::string_view("a\0b", 3), 1).empty());
  EXPECT_FALSE(build_dcb_request(DCB_CMD_IEEE_GET, "0123456789abcde", 1).empty());
}

TEST(DcbParse, ConnectX7Answer) {
  const auto bytes = cx7_answer(5);
  DcbState s;
  ASSERT_TRUE(parse_dcb_datagram(bytes, 5, DCB_CMD_IEEE_GET, s));
  EXPECT_EQ(s.status, DcbStatus::Ok) << s.reason;
  EXPECT_EQ(s.pfc_cap, 8);
  EXPECT_EQ(s.pfc_en, 0x08);
  ASSERT_EQ(s.apps.size(), 64u);
  EXPECT_EQ(s.apps[26], (DcbApp{kAppSelDscp, 3, 26}));
  EXPECT_EQ(s.apps[63], (DcbApp{kAppSelDscp, 7, 63}));
  EXPECT_EQ(s.dcbx, DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE);
  EXPECT_EQ(dcbx_text(*s.dcbx), "host,ieee");
}

TEST(DcbParse, ErrorsBecomeStatuses) {
  DcbState s;
  ASSERT_TRUE(parse_dcb_datagram(error_answer(3, EOPNOTSUPP), 3, DCB_CMD_IEEE_GET, s));
  EXPECT_EQ(s.status, DcbStatus::NotSupported);
  ASSERT_TRUE(parse_dcb_datagram(error_answer(3, ENODEV), 3, DCB_CMD_IEEE_GET, s));
  EXPECT_EQ(s.status, DcbStatus::NoDevice);
  ASSERT_TRUE(parse_dcb_datagram(error_answer(3, EPERM), 3, DCB_CMD_IEEE_GET, s));
  EXPECT_EQ(s.status, DcbStatus::Unknown);
  EXPECT_NE(s.reason.find("not permitted"), std::string::npos) << s.reason;
}

TEST(DcbParse, IgnoresOtherRequestsAndCommands) {
  DcbState s;
  EXPECT_FALSE(parse_dcb_datagram(cx7_answer(4), 5, DCB_CMD_IEEE_GET, s));
  EXPECT_FALSE(parse_dcb_datagram(cx7_answer(5), 5, DCB_CMD_GDCBX, s));
  EXPECT_EQ(s.status, DcbStatus::Unknown);
  EXPECT_FALSE(s.pfc_en.has_value());
  // Two messages in one datagram: the answer is found after a stranger's.
  auto both = cx7_answer(9);
  const auto mine = cx7_answer(5);
  both.insert(both.end(), mine.begin(), mine.end());
  ASSERT_TRUE(parse_dcb_datagram(both, 5, DCB_CMD_IEEE_GET, s));
  EXPECT_EQ(s.pfc_en, 0x08);
}

TEST(DcbParse, GdcbxAnswer) {
  Msg m(RTM_GETDCB, 2);
  m.dcb(DCB_CMD_GDCBX);
  const uint8_t dcbx = DCB_CAP_DCBX_LLD_MANAGED | DCB_CAP_DCBX_VER_CEE;
  m.attr(DCB_ATTR_DCBX, &dcbx, 1);
  DcbState s;
  ASSERT_TRUE(parse_dcb_datagram(m.done(), 2, DCB_CMD_GDCBX, s));
  EXPECT_EQ(s.status, DcbStatus::Ok);
  EXPECT_EQ(dcbx_text(*s.dcbx), "lld-managed,cee");
}

TEST(DcbParse, MalformedLengthsAreUnknownNeverOutOfBounds) {
  // A PFC attribute one byte long: pfc_en is missing.
  Msg m(RTM_GETDCB, 1);
  m.dcb(DCB_CMD_IEEE_GET);
  const size_t ieee = m.open(DCB_ATTR_IEEE);
  const uint8_t one = 8;
  m.attr(DCB_ATTR_IEEE_PFC, &one, 1);
  m.close(ieee);
  DcbState s;
  ASSERT_TRUE(parse_dcb_datagram(m.done(), 1, DCB_CMD_IEEE_GET, s));
  EXPECT_EQ(s.status, DcbStatus::Unknown);
  EXPECT_NE(s.reason.find("malformed"), std::string::npos);

  // An attribute claiming more bytes than the message has.
  auto bytes = cx7_answer(1);
  const size_t at = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(dcbmsg));  // DCB_ATTR_IFNAME
  const uint16_t huge = 0xfff0;
  std::memcpy(bytes.data() + at, &huge, sizeof huge);
  DcbState t;
  ASSERT_TRUE(parse_dcb_datagram(bytes, 1, DCB_CMD_IEEE_GET, t));
  EXPECT_EQ(t.status, DcbStatus::Unknown);

  // Every truncation of a real answer (as a short read or a lying nlmsg_len would give): never a crash,
  // never Ok with a PFC state the bytes did not hold in full.
  const auto full = cx7_answer(1);
  for (size_t n = 0; n < full.size(); ++n) {
    DcbState u;
    parse_dcb_datagram(std::span<const uint8_t>(full).first(n), 1, DCB_CMD_IEEE_GET, u);
    EXPECT_NE(u.status, DcbStatus::Ok) << "prefix of " << n << " bytes";
    // The same bytes with nlmsg_len fixed to the cut: a well-formed but incomplete answer.
    if (n >= sizeof(nlmsghdr)) {
      std::vector<uint8_t> cut = full;
      cut.resize(n);
      const auto len = static_cast<uint32_t>(n);
      std::memcpy(cut.data(), &len, sizeof len);
      DcbState v;
      parse_dcb_datagram(cut, 1, DCB_CMD_IEEE_GET, v);
      EXPECT_LE(v.apps.size(), 64u);
    }
  }
}

TEST(DcbFixture, ParsesTheDocumentedFormat) {
  const auto s = parse_dcb_fixture(
      "# ConnectX-7, trust dscp, PFC on 3\n"
      "result=ok\n"
      "pfc_cap=8\n"
      "pfc_en=3,4   # two lossless priorities\n"
      "app=dscp,26,3\n"
      "app=dgram,4791,3\n"
      "dcbx=host,ieee\n");
  EXPECT_EQ(s.status, DcbStatus::Ok) << s.reason;
  EXPECT_EQ(s.pfc_cap, 8);
  EXPECT_EQ(s.pfc_en, 0x18);
  EXPECT_EQ(s.apps, (std::vector<DcbApp>{{kAppSelDscp, 3, 26}, {kAppSelDgram, 3, 4791}}));
  EXPECT_EQ(s.dcbx, 0x09);
  EXPECT_EQ(parse_dcb_fixture("result=ok\npfc_en=none\n").pfc_en, 0);
}

TEST(DcbFixture, ErrorsAndBadLines) {
  const auto veth = parse_dcb_fixture("result=EOPNOTSUPP\npfc_en=3\n");
  EXPECT_EQ(veth.status, DcbStatus::NotSupported);
  EXPECT_FALSE(veth.pfc_en.has_value());  // an error answer carries nothing
  EXPECT_EQ(parse_dcb_fixture("result=ENODEV\n").status, DcbStatus::NoDevice);
  for (const char* bad :
       {"pfc_en=3\n", "result=ok\npfc_en=8\n", "result=ok\napp=dscp,26\n", "result=ok\napp=dscp,26,9\n",
        "result=ok\nbogus=1\n", "result=ok\ndcbx=weird\n", "result=ok\nno equals sign\n"}) {
    const auto s = parse_dcb_fixture(bad);
    EXPECT_EQ(s.status, DcbStatus::Unknown) << bad;
    EXPECT_FALSE(s.reason.empty()) << bad;
  }
  EXPECT_NE(parse_dcb_fixture("result=ok\n\nbogus=1\n").reason.find("line 3"), std::string::npos);
}

TEST(DcbFixture, MissingFileIsUnknown) {
  const auto src = make_fixture_dcb_source("/nonexistent-railscope-root");
  const auto s = src->read("eth2");
  EXPECT_EQ(s.status, DcbStatus::Unknown);
  EXPECT_NE(s.reason.find("no DCB fixture"), std::string::npos);
  EXPECT_EQ(src->read("../etc").status, DcbStatus::Unknown);
}

// The real reader against this host's kernel. Loopback never has dcbnl_ops, so the kernel answers
// EOPNOTSUPP (net/dcb/dcbnl.c, dcb_doit), or rtnetlink itself does when the kernel lacks CONFIG_DCB.
TEST(DcbNetlink, KernelAnswersForLoopbackAndUnknownNames) {
  const auto src = make_netlink_dcb_source();
  const auto lo = src->read("lo");
  if (lo.status == DcbStatus::Unknown && lo.reason.find("Address family") != std::string::npos)
    GTEST_SKIP() << "no netlink sockets here: " << lo.reason;
  EXPECT_EQ(lo.status, DcbStatus::NotSupported) << lo.reason;
  const auto none = src->read("rsnx0");
  EXPECT_TRUE(none.status == DcbStatus::NoDevice || none.status == DcbStatus::NotSupported)
      << to_string(none.status) << ": " << none.reason;
}
