// SPDX-License-Identifier: Apache-2.0
// NCCL_NET_GDR_LEVEL parsing, table-driven against NCCL 2.28's ncclGetLevel rules.
#include <gtest/gtest.h>

#include <cstdlib>

#include "railscope/gpu/path_type.h"

namespace railscope::gpu {
namespace {

struct Case {
  const char* text;  // nullptr = unset
  PathType level;
  bool from_env;
  bool ignored;  // a note explains why the value was ignored
};

class GdrLevelParse : public ::testing::TestWithParam<Case> {};

TEST_P(GdrLevelParse, MatchesNccl) {
  const Case& c = GetParam();
  auto got = parse_gdr_level(c.text ? std::optional<std::string_view>(c.text) : std::nullopt);
  EXPECT_EQ(got.level, c.level) << (c.text ? c.text : "(unset)") << " gave " << to_string(got.level);
  EXPECT_EQ(got.from_env, c.from_env);
  EXPECT_EQ(!got.note.empty(), c.ignored) << got.note;
}

INSTANTIATE_TEST_SUITE_P(
    Table, GdrLevelParse,
    ::testing::Values(Case{nullptr, PathType::Pxb, false, false}, Case{"LOC", PathType::Loc, true, false},
                      Case{"NVL", PathType::Nvl, true, false}, Case{"NVB", PathType::Nvb, true, false},
                      Case{"C2C", PathType::C2c, true, false}, Case{"PIX", PathType::Pix, true, false},
                      Case{"PXB", PathType::Pxb, true, false}, Case{"P2C", PathType::P2c, true, false},
                      Case{"PXN", PathType::Pxn, true, false}, Case{"PHB", PathType::Phb, true, false},
                      Case{"SYS", PathType::Sys, true, false},
                      // old integer levels: 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 SYS, larger = SYS
                      Case{"0", PathType::Loc, true, false}, Case{"1", PathType::Pix, true, false},
                      Case{"2", PathType::Pxb, true, false}, Case{"3", PathType::Phb, true, false},
                      Case{"4", PathType::Sys, true, false}, Case{"5", PathType::Sys, true, false},
                      Case{"99", PathType::Sys, true, false}, Case{"0x3", PathType::Phb, true, false},
                      Case{"2abc", PathType::Pxb, true, false},  // strtol stops at the junk, as in NCCL
                      // names are case-sensitive in NCCL; unknown text keeps the default
                      Case{"phb", PathType::Pxb, false, true}, Case{"NET", PathType::Pxb, false, true},
                      Case{"-1", PathType::Pxb, false, true}, Case{"far", PathType::Pxb, false, true}));

TEST(GdrLevel, NamesRoundTrip) {
  for (int i = 0; i <= 9; ++i) {
    auto p = static_cast<PathType>(i);
    EXPECT_EQ(parse_gdr_level(to_string(p)).level, p);
  }
}

TEST(GdrLevel, ReadsTheEnvironment) {
  setenv("NCCL_NET_GDR_LEVEL", "SYS", 1);
  EXPECT_EQ(gdr_level_from_env().level, PathType::Sys);
  unsetenv("NCCL_NET_GDR_LEVEL");
  EXPECT_EQ(gdr_level_from_env().level, PathType::Pxb);
  EXPECT_FALSE(gdr_level_from_env().from_env);
}

}  // namespace
}  // namespace railscope::gpu
