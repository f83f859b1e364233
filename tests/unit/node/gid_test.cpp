// SPDX-License-Identifier: Apache-2.0
// Gid parsing and classification.
#include <gtest/gtest.h>

#include "railscope/node/gid.h"

using namespace railscope::node;

TEST(Gid, ParsesSysfsForm) {
  auto g = Gid::parse("0000:0000:0000:0000:0000:ffff:0a00:0001\n");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->family(), AddrFamily::V4);
  EXPECT_EQ(ipv4_text(*g), "10.0.0.1");
  EXPECT_EQ(g->to_string(), "::ffff:10.0.0.1");
  EXPECT_EQ(g->to_sysfs_string(), "0000:0000:0000:0000:0000:ffff:0a00:0001");
  EXPECT_TRUE(g->is_valid_for_roce());
}

TEST(Gid, ParsesTextForm) {
  auto g = Gid::parse("fe80::250:56ff:fe8f:1234");
  ASSERT_TRUE(g);
  EXPECT_TRUE(g->is_link_local());
  EXPECT_EQ(g->family(), AddrFamily::V6);
  EXPECT_TRUE(g->is_configured());
  EXPECT_FALSE(g->is_valid_for_roce());
}

TEST(Gid, RejectsGarbage) {
  for (const char* bad :
       {"", "zzzz:0000:0000:0000:0000:ffff:0a00:0001", "1234", "0000:0000:0000:0000:0000:ffff:0a00",
        "hello world", "0000-0000-0000-0000-0000-ffff-0a00-0001"})
    EXPECT_FALSE(Gid::parse(bad)) << bad;
}

TEST(Gid, ZeroAndBarePrefixAreNotConfigured) {
  EXPECT_TRUE(Gid{}.is_zero());
  EXPECT_FALSE(Gid{}.is_configured());
  EXPECT_FALSE(Gid::parse("fe80::")->is_configured());
}

TEST(Gid, MulticastMappedIsV4) { EXPECT_EQ(Gid::parse("ff0e::ffff:10.0.0.1")->family(), AddrFamily::V4); }

TEST(Gid, FlidIsBytesFourAndFive) {
  EXPECT_EQ(Gid::parse("fec0:0000:0012:0000:0000:0000:0000:0001")->flid(), 0x12);
  EXPECT_EQ(Gid::parse("fe80::1")->flid(), 0);
}

TEST(Gid, TypeText) {
  EXPECT_EQ(parse_gid_type("RoCE v2\n", false), GidType::RoceV2);
  EXPECT_EQ(parse_gid_type("IB/RoCE v1", false), GidType::RoceV1);
  EXPECT_EQ(parse_gid_type("IB/RoCE v1", true), GidType::IB);
  EXPECT_EQ(parse_gid_type("RoCE v1", false), GidType::RoceV1);
  EXPECT_EQ(parse_gid_type("", false), GidType::Unknown);
  EXPECT_EQ(parse_gid_type("\x01garbage", false), GidType::Unknown);
  EXPECT_EQ(roce_version(GidType::RoceV2), 2);
  EXPECT_EQ(roce_version(GidType::Unknown), 0);
}
