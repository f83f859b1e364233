// SPDX-License-Identifier: Apache-2.0
// NCCL_ALGO / NCCL_PROTO in NCCL's syntax: which collectives the user restricted.
#include <gtest/gtest.h>

#include "plugin/tuner/config/nccl_env.h"

namespace railscope::tuner {
namespace {

TEST(NcclEnv, UnsetRestrictsNothing) {
  const UserRestrictions r = restrictions_from(std::nullopt, std::nullopt);
  for (bool b : r.restricted) EXPECT_FALSE(b);
}

TEST(NcclEnv, PlainListRestrictsEveryCollective) {
  const UserRestrictions r = restrictions_from(std::string("Ring,Tree"), std::nullopt);
  for (bool b : r.restricted) EXPECT_TRUE(b);
  EXPECT_EQ(r.why[kAllReduce], "NCCL_ALGO=Ring,Tree");
}

TEST(NcclEnv, PrefixedEntryRestrictsOnlyThatCollective) {
  const UserRestrictions r = restrictions_from(std::nullopt, std::string("allreduce:^LL128"));
  EXPECT_TRUE(r.restricted[kAllReduce]);
  EXPECT_FALSE(r.restricted[kAllGather]);
  EXPECT_EQ(r.why[kAllReduce], "NCCL_PROTO=allreduce:^LL128");
}

TEST(NcclEnv, ListOfEverythingRestrictsNothing) {
  const UserRestrictions r = restrictions_from(
      std::string("tree,ring,collnetdirect,collnetchain,nvls,nvlstree,pat"), std::string("LL,LL128,Simple"));
  for (bool b : r.restricted) EXPECT_FALSE(b);
}

TEST(NcclEnv, ParsesNcclExamples) {
  std::string err;
  const auto a =
      parse_nccl_list("ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring", true, &err);
  ASSERT_TRUE(a) << err;
  EXPECT_EQ((*a)[kAllGather], (1u << kRing) | (1u << kCollNetDirect));
  EXPECT_EQ((*a)[kAllReduce], (1u << kTree) | (1u << kCollNetDirect));
  EXPECT_EQ((*a)[kBroadcast], 1u << kRing);
  const auto p = parse_nccl_list("^LL128;allreduce:LL128", false, &err);
  ASSERT_TRUE(p) << err;
  EXPECT_EQ((*p)[kReduce], (1u << kLL) | (1u << kSimple));
  EXPECT_EQ((*p)[kAllReduce], 1u << kLL128);
}

TEST(NcclEnv, GarbageRestrictsEverythingWithAWarning) {
  const UserRestrictions r = restrictions_from(std::string("ring;tree"), std::nullopt);
  for (bool b : r.restricted) EXPECT_TRUE(b);
  EXPECT_NE(r.warning.find("needs a collective prefix"), std::string::npos) << r.warning;
  const UserRestrictions u = restrictions_from(std::nullopt, std::string("LL256"));
  EXPECT_NE(u.warning.find("unknown protocol 'LL256'"), std::string::npos) << u.warning;
}

}  // namespace
}  // namespace railscope::tuner
