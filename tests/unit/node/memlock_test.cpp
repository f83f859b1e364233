// SPDX-License-Identifier: Apache-2.0
// Memlock evaluation and CapEff parsing.
#include <gtest/gtest.h>

#include "railscope/node/memlock.h"

using namespace railscope::node;

TEST(Memlock, CapEffBit14) {
  EXPECT_EQ(cap_ipc_lock_from_status("Name:\tx\nCapEff:\t000001ffffffffff\n"), true);
  EXPECT_EQ(cap_ipc_lock_from_status("CapEff:\t0000000000000000\n"), false);
  EXPECT_EQ(cap_ipc_lock_from_status("CapEff:\t0000000000004000\n"), true);
  EXPECT_EQ(cap_ipc_lock_from_status("CapEff:\t0000000000003fff\n"), false);
  EXPECT_EQ(cap_ipc_lock_from_status("CapEff:\tzz\n"), std::nullopt);
  EXPECT_EQ(cap_ipc_lock_from_status("CapEff:\n"), std::nullopt);
  EXPECT_EQ(cap_ipc_lock_from_status("no caps here"), std::nullopt);
}

TEST(Memlock, Evaluation) {
  struct Case {
    uint64_t soft, hard;
    std::optional<bool> cap;
    const char* expected;  // "" = no finding
  };
  const uint64_t U = kMemlockUnlimited;
  for (auto c : {Case{64 << 10, 64 << 10, false, "memlock.too_low"},
                 Case{8ull << 20, U, false, "memlock.too_low"}, Case{64 << 10, 64 << 10, true, ""},
                 Case{U, U, false, ""}, Case{64ull << 20, U, false, "memlock.finite"},
                 Case{1ull << 30, 1ull << 30, std::nullopt, "memlock.finite"},
                 Case{0, 0, std::nullopt, "memlock.too_low"}}) {
    MemlockState s;
    s.soft_bytes = c.soft;
    s.hard_bytes = c.hard;
    s.cap_ipc_lock = c.cap;
    auto f = evaluate_memlock(s);
    if (std::string(c.expected).empty()) {
      EXPECT_TRUE(f.empty()) << c.soft;
    } else {
      ASSERT_EQ(f.size(), 1u) << c.soft;
      EXPECT_EQ(f[0].id(), c.expected);
    }
  }
}

TEST(Memlock, FixUsesHardLimit) {
  MemlockState s;
  s.soft_bytes = 64 << 10;
  s.hard_bytes = kMemlockUnlimited;
  s.cap_ipc_lock = false;
  auto f = evaluate_memlock(s);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].effective_fix().find("ulimit -l unlimited"), std::string::npos);
  EXPECT_NE(f[0].detail.find("64 KiB"), std::string::npos) << f[0].detail;
}

TEST(Memlock, Text) {
  EXPECT_EQ(memlock_text(kMemlockUnlimited), "unlimited");
  EXPECT_EQ(memlock_text(64 << 10), "64 KiB");
  EXPECT_EQ(memlock_text(8 << 20), "8 MiB");
  EXPECT_EQ(memlock_text(1000), "1000 B");
}

TEST(Memlock, ReadsThisProcess) {
  const MemlockState s = read_memlock();
  EXPECT_TRUE(s.cap_ipc_lock.has_value()) << s.error;
  EXPECT_GE(s.hard_bytes, s.soft_bytes);
}
