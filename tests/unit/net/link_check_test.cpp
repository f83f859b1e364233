// SPDX-License-Identifier: Apache-2.0
// The checks made before RTR: link layer, GID type/family/link-local, and the path MTU negotiation.
#include <gtest/gtest.h>

#include "plugin/net/verbs/setup/handshake.h"
#include "railscope/node/mtu.h"

namespace railscope::net::verbs {
namespace {

node::PortRecord roce(const char* name, const char* netdev, uint8_t last, int mtu, uint32_t netdev_mtu) {
  node::PortRecord d;
  d.dev_name = name;
  d.netdev = netdev;
  d.link_layer = node::LinkLayer::Ethernet;
  d.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, last};
  d.gid_index = 1;
  d.gid_type = node::GidType::RoceV2;
  d.active_mtu = mtu;
  d.netdev_mtu = netdev_mtu;
  return d;
}

node::PortRecord link_local(node::PortRecord d) {
  d.gid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x50, 0x56, 0xff, 0xfe, 0x8f, 0x12, 0x34};
  d.gid_index = 0;
  return d;
}

TEST(NetLinkCheck, SameMtuPasses) {
  PathChoice p;
  auto st =
      check_link(roce("rxe0", "vethA", 1, 1024, 1500), "a", roce("rxe1", "vethB", 2, 1024, 1500), "b", &p);
  ASSERT_TRUE(st.ok()) << diag::one_line(st.finding());
  EXPECT_EQ(p.path_mtu, 1024);
  EXPECT_TRUE(p.warnings.empty());
}

TEST(NetLinkCheck, MtuMismatchUsesTheSmallerAndNamesBothNetdevMtus) {
  for (bool local_big : {true, false}) {
    PathChoice p;
    auto big = roce("rxe0", "vethA", 1, 4096, 9000), small = roce("rxe1", "vethB", 2, 1024, 1500);
    auto st = local_big ? check_link(big, "a", small, "b", &p) : check_link(small, "b", big, "a", &p);
    ASSERT_TRUE(st.ok());
    EXPECT_EQ(p.path_mtu, 1024);
    ASSERT_EQ(p.warnings.size(), 1u);
    EXPECT_EQ(p.warnings[0].id(), "mtu.mismatch");
    std::string line = diag::one_line(p.warnings[0]);
    EXPECT_NE(line.find("vethA MTU 9000"), std::string::npos) << line;
    EXPECT_NE(line.find("vethB MTU 1500"), std::string::npos) << line;
    EXPECT_NE(line.find("path MTU 1024"), std::string::npos) << line;
  }
}

TEST(NetLinkCheck, LinkLayerMismatch) {
  PathChoice p;
  auto ib = roce("mlx5_0", "", 1, 5, 0);
  ib.link_layer = node::LinkLayer::InfiniBand;
  auto st = check_link(ib, "a", roce("rxe1", "vethB", 2, 3, 1500), "b", &p);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.finding().id(), "link.layer_mismatch");
}

TEST(NetLinkCheck, LinkLocalTowardsRoutablePeerNamesBothGidsAndTheFix) {
  PathChoice p;
  auto st = check_link(link_local(roce("rxe0", "vethA", 1, 3, 1500)), "host-a",
                       roce("rxe1", "vethB", 2, 3, 1500), "host-b", &p);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.finding().id(), "gid.link_local");
  EXPECT_EQ(st.finding().severity, diag::Severity::Error);
  std::string line = diag::one_line(st.finding());
  EXPECT_NE(line.find("fe80::250:56ff:fe8f:1234"), std::string::npos) << line;
  EXPECT_NE(line.find("::ffff:10.0.0.2"), std::string::npos) << line;
  EXPECT_NE(line.find("host-a"), std::string::npos) << line;
  EXPECT_NE(line.find("host-b"), std::string::npos) << line;
  EXPECT_NE(line.find("NCCL_IB_GID_INDEX"), std::string::npos) << line;
  // The same from the other end blames the same side.
  st = check_link(roce("rxe1", "vethB", 2, 3, 1500), "host-b", link_local(roce("rxe0", "vethA", 1, 3, 1500)),
                  "host-a", &p);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(diag::one_line(st.finding()).find("On host-a set NCCL_IB_GID_INDEX"), std::string::npos);
}

TEST(NetLinkCheck, BothLinkLocalIsAllowed) {
  PathChoice p;
  EXPECT_TRUE(check_link(link_local(roce("rxe0", "vethA", 1, 3, 1500)), "a",
                         link_local(roce("rxe1", "vethB", 2, 3, 1500)), "b", &p)
                  .ok());
}

TEST(NetLinkCheck, GidTypeOrFamilyMismatch) {
  PathChoice p;
  auto v1 = roce("rxe1", "vethB", 2, 3, 1500);
  v1.gid_type = node::GidType::RoceV1;
  auto st = check_link(roce("rxe0", "vethA", 1, 3, 1500), "a", v1, "b", &p);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.finding().id(), "gid.mismatch");
  EXPECT_NE(diag::one_line(st.finding()).find("RoCE v1"), std::string::npos);
  auto v6 = roce("rxe1", "vethB", 2, 3, 1500);
  v6.gid = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  st = check_link(roce("rxe0", "vethA", 1, 3, 1500), "a", v6, "b", &p);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.finding().id(), "gid.mismatch");
}

// The MTU code and GID text the checks print come from lib/node (one implementation each).
TEST(NetLinkCheck, HelperFacts) {
  EXPECT_EQ(node::ib_mtu_bytes(1), 256);
  EXPECT_EQ(node::ib_mtu_bytes(3), 1024);
  EXPECT_EQ(node::ib_mtu_bytes(5), 4096);
  EXPECT_EQ(node::ib_mtu_bytes(0), 0);
  EXPECT_EQ(node::ib_mtu_bytes(6), 0);
  EXPECT_EQ(roce("x", "", 7, 3, 0).gid.to_string(), "::ffff:10.0.0.7");
}

TEST(NetLinkCheck, UnknownGidTypeIsNamed) {
  PathChoice p;
  auto odd = roce("rxe1", "vethB", 2, 3, 1500);
  odd.gid_type = node::GidType::Unknown;
  auto st = check_link(roce("rxe0", "vethA", 1, 3, 1500), "a", odd, "b", &p);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.finding().id(), "gid.mismatch");
  EXPECT_NE(diag::one_line(st.finding()).find("(unknown, IPv4)"), std::string::npos)
      << diag::one_line(st.finding());
}

}  // namespace
}  // namespace railscope::net::verbs
