// SPDX-License-Identifier: Apache-2.0
// NCCL_IB_ADDR_RANGE parsing and matching, IPv4 and IPv6.
#include <gtest/gtest.h>

#include "railscope/node/gid_selection.h"

using namespace railscope::node;

namespace {
Gid G(const char* t) { return *Gid::parse(t); }
}  // namespace

TEST(AddrRange, V4) {
  std::string err;
  auto r = parse_addr_range("10.0.0.0/24", AddrFamily::V4, &err);
  ASSERT_TRUE(r) << err;
  EXPECT_TRUE(r->contains(G("::ffff:10.0.0.2")));
  EXPECT_FALSE(r->contains(G("::ffff:10.0.1.2")));
  auto all = parse_addr_range("0.0.0.0/0", AddrFamily::V4, &err);
  EXPECT_TRUE(all->contains(G("::ffff:192.168.1.1")));
  auto host = parse_addr_range("10.0.0.2/32", AddrFamily::V4, &err);
  EXPECT_TRUE(host->contains(G("::ffff:10.0.0.2")));
  EXPECT_FALSE(host->contains(G("::ffff:10.0.0.1")));
}

TEST(AddrRange, V6) {
  std::string err;
  auto r = parse_addr_range("fd00:1::/48", AddrFamily::V6, &err);
  ASSERT_TRUE(r) << err;
  EXPECT_TRUE(r->contains(G("fd00:1:0:5::1")));
  EXPECT_FALSE(r->contains(G("fd00:2::1")));
  auto r2 = parse_addr_range("fd00:1:2:3::/72", AddrFamily::V6, &err);
  EXPECT_TRUE(r2->contains(G("fd00:1:2:3:00ff::1")));
  EXPECT_FALSE(r2->contains(G("fd00:1:2:3:ff00::1")));
}

TEST(AddrRange, Rejects) {
  struct Case {
    const char* text;
    AddrFamily fam;
  };
  for (auto c : {Case{"10.0.0.0", AddrFamily::V4}, Case{"10.0.0.0/33", AddrFamily::V4},
                 Case{"10.0.0.0/x", AddrFamily::V4}, Case{"fd00::/64", AddrFamily::V4},
                 Case{"10.0.0.0/8", AddrFamily::V6}, Case{"fd00::/129", AddrFamily::V6},
                 Case{"/8", AddrFamily::V4}, Case{"10.0.0.0/-1", AddrFamily::V4}}) {
    std::string err;
    EXPECT_FALSE(parse_addr_range(c.text, c.fam, &err)) << c.text;
    EXPECT_FALSE(err.empty()) << c.text;
  }
}
