// SPDX-License-Identifier: Apache-2.0
// NCCL_IB_HCA parsing and matching with NCCL's rules.
#include <gtest/gtest.h>

#include "railscope/node/hca_filter.h"

using namespace railscope::node;

namespace {

struct Probe {
  const char* dev;
  int port;
  bool selected;
};

struct HcaCase {
  const char* filter;
  std::vector<Probe> probes;
};

}  // namespace

TEST(HcaFilter, MatchesLikeNccl) {
  const std::vector<HcaCase> cases = {
      {"", {{"mlx5_0", 1, true}, {"rxe0", 1, true}}},
      {"mlx5", {{"mlx5_0", 1, true}, {"mlx5_10", 2, true}, {"rxe0", 1, false}}},
      {"mlx5_1", {{"mlx5_1", 1, true}, {"mlx5_10", 1, true}, {"mlx5_0", 1, false}}},  // prefix: mlx5_10 too
      {"=mlx5_1", {{"mlx5_1", 1, true}, {"mlx5_10", 1, false}}},
      {"mlx5_0:1,mlx5_1:2",
       {{"mlx5_0", 1, true}, {"mlx5_0", 2, false}, {"mlx5_1", 2, true}, {"mlx5_1", 1, false}}},
      {"^mlx5_0", {{"mlx5_0", 1, false}, {"mlx5_1", 1, true}, {"rxe0", 1, true}}},
      {"^=rxe0:1", {{"rxe0", 1, false}, {"rxe0", 2, true}, {"rxe01", 1, true}}},
      {"^", {{"rxe0", 1, false}}},                           // exclude nothing listed = exclude everything
      {",,rxe1,", {{"rxe1", 1, true}, {"rxe0", 1, false}}},  // empty items dropped
      {"rxe0:x", {{"rxe0", 1, false}, {"rxe0", 0, true}}},   // atoi("x") = 0
      {":1", {{"rxe0", 1, true}}},                           // nameless item dropped → empty list → all
  };
  for (const auto& c : cases) {
    const HcaFilter f = parse_hca_filter(c.filter);
    for (const auto& p : c.probes)
      EXPECT_EQ(f.selects(p.dev, p.port), p.selected)
          << "NCCL_IB_HCA='" << c.filter << "' " << p.dev << ":" << p.port;
  }
}

TEST(HcaFilter, ParsesSyntax) {
  const HcaFilter f = parse_hca_filter("^=mlx5_0:1,mlx5_3");
  EXPECT_TRUE(f.exclude);
  EXPECT_TRUE(f.exact);
  ASSERT_EQ(f.specs.size(), 2u);
  EXPECT_EQ(f.specs[0].name, "mlx5_0");
  EXPECT_EQ(f.specs[0].port, 1);
  EXPECT_EQ(f.specs[1].port, -1);
  EXPECT_TRUE(f.warnings.empty());
  EXPECT_TRUE(parse_hca_filter("").unset());
}

TEST(HcaFilter, WarnsOnOddInput) {
  EXPECT_EQ(parse_hca_filter("rxe0:one").warnings.size(), 1u);
  std::string many;
  for (int i = 0; i < 40; ++i) many += "d" + std::to_string(i) + ",";
  const HcaFilter f = parse_hca_filter(many);
  EXPECT_EQ(f.specs.size(), static_cast<size_t>(kMaxHcaItems));
  EXPECT_EQ(f.warnings.size(), 1u);
}
