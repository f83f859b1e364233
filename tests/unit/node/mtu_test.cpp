// SPDX-License-Identifier: Apache-2.0
// RoCE MTU arithmetic and the active_mtu checks.
#include <gtest/gtest.h>

#include "railscope/node/mtu.h"

using namespace railscope::node;

TEST(Mtu, EnumBytes) {
  EXPECT_EQ(ib_mtu_bytes(1), 256);
  EXPECT_EQ(ib_mtu_bytes(3), 1024);
  EXPECT_EQ(ib_mtu_bytes(5), 4096);
  EXPECT_EQ(ib_mtu_bytes(0), 0);
  EXPECT_EQ(ib_mtu_bytes(6), 0);
  EXPECT_EQ(ib_mtu_enum(2048), 4);
  EXPECT_EQ(ib_mtu_enum(1500), 0);
}

TEST(Mtu, NetdevToIbMtu) {
  struct Case {
    int netdev;
    int ib;
  };
  // 1500 → 1024 and 9000 → 4096 as the soft-RoCE test bed shows; edges around the 96-byte budget.
  for (auto c : {Case{1500, 1024}, Case{9000, 4096}, Case{4200, 4096}, Case{4192, 4096}, Case{4191, 2048},
                 Case{2144, 2048}, Case{2143, 1024}, Case{1120, 1024}, Case{1119, 512}, Case{352, 256},
                 Case{351, 0}, Case{0, 0}, Case{-5, 0}, Case{65535, 4096}})
    EXPECT_EQ(roce_mtu_for_netdev(c.netdev), c.ib) << c.netdev;
}

TEST(Mtu, PortChecks) {
  auto ids = [](const std::vector<railscope::diag::Finding>& v) {
    std::vector<std::string> out;
    for (const auto& f : v) out.emplace_back(f.id());
    return out;
  };
  EXPECT_EQ(ids(check_port_mtu("rxe0:1", 4096, "vethA", 9000)), std::vector<std::string>{});
  EXPECT_EQ(ids(check_port_mtu("rxe0:1", 1024, "vethA", 1500)), std::vector<std::string>{"mtu.small"});
  EXPECT_EQ(ids(check_port_mtu("rxe0:1", 1024, "vethA", 9000)), std::vector<std::string>{"mtu.below_netdev"});
  EXPECT_EQ(ids(check_port_mtu("rxe0:1", 4096, "vethA", 1500)), std::vector<std::string>{"mtu.above_netdev"});
  EXPECT_TRUE(check_port_mtu("rxe0:1", 0, "vethA", 1500).empty());
  EXPECT_TRUE(check_port_mtu("rxe0:1", 1024, "", 0).empty());
  auto f = check_port_mtu("rxe0:1", 4096, "vethA", 1500);
  EXPECT_EQ(f[0].severity, railscope::diag::Severity::Error);
  EXPECT_NE(f[0].detail.find("carries at most 1024"), std::string::npos) << f[0].detail;
}

TEST(Mtu, LocalMismatch) {
  EXPECT_FALSE(check_local_mtu_mismatch({{"rxe0:1", 1024}, {"rxe1:1", 1024}}));
  EXPECT_FALSE(check_local_mtu_mismatch({{"rxe0:1", 4096}, {"rxe1:1", 0}}));
  EXPECT_FALSE(check_local_mtu_mismatch({}));
  auto f = check_local_mtu_mismatch({{"rxe0:1", 4096}, {"rxe1:1", 1024}});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id(), "mtu.mismatch");
  EXPECT_NE(f->detail.find("must use 1024; a peer that uses 4096 loses every large packet"),
            std::string::npos)
      << f->detail;
}
