// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <set>

#include "railscope/core/diagnosis.h"

namespace railscope::diag {
namespace {

TEST(Diagnosis, IdsAreUniqueSortedAndComplete) {
  std::set<std::string_view> seen;
  std::string_view previous;
  for (const Entry& e : catalogue()) {
    EXPECT_TRUE(seen.insert(e.id).second) << "duplicate id " << e.id;
    EXPECT_LT(previous, e.id);
    previous = e.id;
    EXPECT_NE(e.id.find('.'), std::string_view::npos) << e.id << " is not dotted";
    EXPECT_FALSE(e.title.empty()) << e.id;
    EXPECT_FALSE(e.cause.empty()) << e.id;
    EXPECT_FALSE(e.fix.empty()) << e.id;
  }
  EXPECT_GT(seen.size(), 30u);
}

TEST(Diagnosis, FindKnownAndUnknown) {
  ASSERT_NE(find("mtu.mismatch"), nullptr);
  EXPECT_EQ(find("mtu.mismatch")->severity, Severity::Warning);
  EXPECT_EQ(find("no.such.id"), nullptr);
}

TEST(Diagnosis, OneLineNamesIdDetailAndFix) {
  auto f = make("memlock.too_low", "RLIMIT_MEMLOCK is 64 KiB, registering 1048576 bytes failed");
  EXPECT_EQ(f.severity, Severity::Error);
  const std::string line = one_line(f);
  EXPECT_EQ(line.rfind("[memlock.too_low] RLIMIT_MEMLOCK is 64 KiB", 0), 0u) << line;
  EXPECT_NE(line.find("Fix: Run with `ulimit -l unlimited`"), std::string::npos) << line;
}

TEST(Diagnosis, CaseSpecificFixWins) {
  auto f = make("gid.link_local", "rxe0:1 uses GID index 0 (fe80::1)", "set NCCL_IB_GID_INDEX=1");
  EXPECT_EQ(one_line(f), "[gid.link_local] rxe0:1 uses GID index 0 (fe80::1). Fix: set NCCL_IB_GID_INDEX=1");
}

TEST(Diagnosis, UnknownIdNeverCrashes) {
  auto f = make("typo.id", "something");
  ASSERT_NE(f.entry, nullptr);
  EXPECT_EQ(f.id(), "internal.unknown_diagnosis");
  EXPECT_NE(f.detail.find("typo.id"), std::string::npos);
}

}  // namespace
}  // namespace railscope::diag
