// SPDX-License-Identifier: Apache-2.0
// NCCL's GID selection, table-driven: each case is a GID table, a policy, the index NCCL would pick and
// the findings railscope raises about it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

#include "railscope/core/params.h"
#include "railscope/node/gid_selection.h"

using namespace railscope::node;

namespace {

struct Row {
  GidIndex index;
  const char* gid;
  GidType type;
};

struct Case {
  const char* name;
  std::vector<Row> table;
  int tbl_len;
  GidPolicy policy;
  int expected;
  std::set<std::string> findings;
  LinkLayer link = LinkLayer::Ethernet;
};

constexpr auto V1 = GidType::RoceV1;
constexpr auto V2 = GidType::RoceV2;
constexpr auto UNK = GidType::Unknown;

GidPolicy policy(int forced = -1, int version = 2, AddrFamily fam = AddrFamily::V4,
                 const char* range = nullptr) {
  GidPolicy p;
  p.forced_index = forced;
  p.roce_version = version;
  p.family = fam;
  if (range) {
    std::string err;
    p.range = parse_addr_range(range, fam, &err);
    EXPECT_TRUE(p.range) << err;
  }
  return p;
}

std::vector<GidEntry> build(const std::vector<Row>& rows) {
  std::vector<GidEntry> out;
  for (const auto& r : rows) {
    GidEntry e;
    e.index = r.index;
    e.gid = *Gid::parse(r.gid);
    e.type = r.type;
    e.netdev = "eth0";
    out.push_back(e);
  }
  return out;
}

const std::vector<Row> kRxe = {{0, "fe80::b8a4:2ff:fe11:2233", V2}, {1, "::ffff:10.0.0.1", V2}};
const std::vector<Row> kMlx5 = {
    {0, "fe80::1", V1}, {1, "fe80::1", V2}, {2, "::ffff:10.1.1.1", V1}, {3, "::ffff:10.1.1.1", V2}};

std::vector<Case> cases() {
  return {
      {"rxe_picks_ipv4_v2", kRxe, 1024, policy(), 1, {}},
      {"mlx5_v1_v2_mixed_picks_ipv4_v2", kMlx5, 256, policy(), 3, {}},
      {"mlx5_version1_wanted", kMlx5, 256, policy(-1, 1), 2, {}},
      {"link_local_only", {{0, "fe80::1", V1}, {1, "fe80::1", V2}}, 16, policy(), 0, {"gid.link_local"}},
      {"ipv6_only_wanting_v4_falls_back_to_link_local",
       {{0, "fe80::1", V2}, {1, "fd00:1::5", V2}},
       16,
       policy(),
       0,
       {"gid.link_local"}},
      {"ipv6_only_wanting_v6",
       {{0, "fe80::1", V2}, {1, "fd00:1::5", V2}},
       16,
       policy(-1, 2, AddrFamily::V6),
       1,
       {}},
      {"range_in",
       {{0, "fe80::1", V2}, {1, "::ffff:10.0.0.1", V2}, {2, "::ffff:192.168.1.5", V2}},
       16,
       policy(-1, 2, AddrFamily::V4, "192.168.0.0/16"),
       2,
       {}},
      {"range_out_of_every_entry",
       {{0, "fe80::1", V2}, {1, "::ffff:10.0.0.1", V2}, {2, "::ffff:192.168.1.5", V2}},
       16,
       policy(-1, 2, AddrFamily::V4, "172.16.0.0/12"),
       0,
       {"gid.link_local"}},
      {"range_v6",
       {{0, "fe80::1", V2}, {1, "fd00:1::5", V2}, {2, "fd00:2::5", V2}},
       16,
       policy(-1, 2, AddrFamily::V6, "fd00:2::/32"),
       2,
       {}},
      {"forced_valid", kRxe, 1024, policy(1), 1, {}},
      {"forced_link_local", kRxe, 1024, policy(0), 0, {"gid.link_local"}},
      {"forced_empty_entry", kRxe, 1024, policy(5), 5, {"gid.index_invalid"}},
      {"forced_beyond_table", kRxe, 1024, policy(2000), 2000, {"gid.index_invalid"}},
      {"forced_roce_v1", kMlx5, 256, policy(2), 2, {"gid.roce_v1"}},
      {"empty_index0", {{1, "::ffff:10.0.0.1", V2}}, 8, policy(), 1, {}},
      {"first_of_equals_wins",
       {{0, "fe80::1", V2}, {1, "::ffff:10.0.0.1", V2}, {2, "::ffff:10.0.0.9", V2}},
       8,
       policy(),
       1,
       {}},
      {"types_unreadable_still_picks_ipv4",
       {{0, "fe80::1", UNK}, {1, "::ffff:10.0.0.1", UNK}},
       8,
       policy(),
       1,
       {}},
      {"ipv4_v1_only", {{0, "fe80::1", V1}, {1, "::ffff:10.0.0.1", V1}}, 8, policy(), 1, {"gid.roce_v1"}},
      // NCCL quirk, replayed faithfully: wanting IPv6 while index 0 is IPv4, the first empty entry (which
      // reads as an all-zero, i.e. IPv6-family, GID) replaces it.
      {"v6_wanted_index0_v4_quirk",
       {{0, "::ffff:10.0.0.1", V2}},
       8,
       policy(-1, 2, AddrFamily::V6),
       1,
       {"gid.none_usable"}},
      {"empty_table", {}, 0, policy(), -1, {"gid.none_usable"}},
      {"infiniband_ignores_forced_index",
       {{0, "fe80::2", GidType::IB}},
       128,
       policy(3),
       0,
       {"gid.forced_on_ib"},
       LinkLayer::InfiniBand},
      {"infiniband_routable_flid",
       {{0, "fe80::2", GidType::IB}, {1, "fec0:0000:0012:0000::2", GidType::IB}},
       128,
       policy(),
       1,
       {},
       LinkLayer::InfiniBand},
  };
}

}  // namespace

class GidSelection : public testing::TestWithParam<Case> {};

TEST_P(GidSelection, PicksLikeNcclAndExplains) {
  const Case& c = GetParam();
  const auto table = build(c.table);
  const GidChoice choice = select_gid(c.link, c.tbl_len, table, c.policy, "dev:1");
  EXPECT_EQ(choice.index, c.expected) << choice.reason;
  std::set<std::string> ids;
  for (const auto& f : choice.findings) ids.emplace(f.id());
  EXPECT_EQ(ids, c.findings) << choice.reason;
  EXPECT_FALSE(choice.reason.empty());
  // Every other non-empty entry is listed as rejected, with a reason.
  size_t others = 0;
  for (const auto& r : c.table)
    if (r.index != c.expected && r.index < std::max(c.tbl_len, 1)) ++others;
  EXPECT_EQ(choice.rejected.size(), others);
  for (const auto& r : choice.rejected) EXPECT_FALSE(r.reason.empty()) << "index " << r.index;
  if (choice.entry) {
    EXPECT_EQ(choice.entry->index, choice.index);
  }
}

INSTANTIATE_TEST_SUITE_P(Table, GidSelection, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

TEST(GidSelectionExplain, RejectionReasonsNameTheRule) {
  const auto table = build(kMlx5);
  const auto c = select_gid(LinkLayer::Ethernet, 256, table, policy(), "mlx5_0:1");
  ASSERT_EQ(c.index, 3);
  std::map<int, std::string> why;
  for (const auto& r : c.rejected) why[r.index] = r.reason;
  EXPECT_NE(why[1].find("family AF_INET6"), std::string::npos) << why[1];
  EXPECT_NE(why[2].find("replaced by index 3"), std::string::npos) << why[2];
  EXPECT_NE(c.reason.find("RoCE v2"), std::string::npos) << c.reason;
}

TEST(GidSelectionExplain, ForcedMentionsAutomaticChoice) {
  const auto table = build(kRxe);
  const auto c = select_gid(LinkLayer::Ethernet, 1024, table, policy(0), "rxe0:1");
  EXPECT_TRUE(c.forced);
  EXPECT_NE(c.reason.find("would pick index 1"), std::string::npos) << c.reason;
}

TEST(GidPolicyFromEnv, ReadsAndValidates) {
  setenv("NCCL_IB_GID_INDEX", "3", 1);
  setenv("NCCL_IB_ADDR_FAMILY", "AF_INET6", 1);
  setenv("NCCL_IB_ADDR_RANGE", "fd00::/16", 1);
  std::vector<railscope::diag::Finding> problems;
  auto p = gid_policy_from_env(&problems);
  EXPECT_EQ(p.forced_index, 3);
  EXPECT_EQ(p.family, AddrFamily::V6);
  ASSERT_TRUE(p.range);
  EXPECT_EQ(p.range->prefix_len, 16);
  EXPECT_TRUE(problems.empty());

  setenv("NCCL_IB_ADDR_FAMILY", "INET", 1);
  setenv("NCCL_IB_ADDR_RANGE", "fd00::/16", 1);  // now parsed as IPv4: invalid, ignored like NCCL
  problems.clear();
  p = gid_policy_from_env(&problems);
  EXPECT_EQ(p.family, AddrFamily::V4);
  EXPECT_FALSE(p.range);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].id(), "config.bad_env");
  unsetenv("NCCL_IB_GID_INDEX");
  unsetenv("NCCL_IB_ADDR_FAMILY");
  unsetenv("NCCL_IB_ADDR_RANGE");
  p = gid_policy_from_env(&problems);
  EXPECT_EQ(p.forced_index, -1);
  EXPECT_EQ(p.roce_version, 2);
}
