// SPDX-License-Identifier: Apache-2.0
// NCCL's '^' / '=' name-list grammar, shared by NCCL_IB_HCA and NCCL_SOCKET_IFNAME.
#include "railscope/node/name_list.h"

#include <gtest/gtest.h>

using namespace railscope::node;

TEST(NameList, Flags) {
  NameList l = parse_name_list("^=mlx5_0,mlx5_1");
  EXPECT_TRUE(l.exclude);
  EXPECT_TRUE(l.exact);
  EXPECT_EQ(l.items, (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  l = parse_name_list("=eth0");
  EXPECT_FALSE(l.exclude);
  EXPECT_TRUE(l.exact);
  l = parse_name_list("^docker");
  EXPECT_TRUE(l.exclude);
  EXPECT_FALSE(l.exact);
  l = parse_name_list("=^x");  // '^' only first: here it is part of the name
  EXPECT_TRUE(l.exact);
  EXPECT_FALSE(l.exclude);
  EXPECT_EQ(l.items, (std::vector<std::string>{"^x"}));
}

TEST(NameList, EmptyItemsDropped) {
  EXPECT_EQ(parse_name_list(",a,,b:1,").items, (std::vector<std::string>{"a", "b:1"}));
  EXPECT_TRUE(parse_name_list("").items.empty());
  EXPECT_TRUE(parse_name_list("^").items.empty());
  EXPECT_TRUE(parse_name_list("^=").items.empty());
}

TEST(NameList, Matching) {
  EXPECT_TRUE(name_matches("mlx5_10", "mlx5_1", false));
  EXPECT_FALSE(name_matches("mlx5_10", "mlx5_1", true));
  EXPECT_TRUE(name_matches("eth0", "eth0", true));
  EXPECT_FALSE(name_matches("eth", "eth0", false));
}
