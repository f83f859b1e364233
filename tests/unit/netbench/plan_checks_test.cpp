// SPDX-License-Identifier: Apache-2.0
// The server's checks of what its client sends: every field of RunParams and SizePlan within
// the bounds netbench plans in, products checked for overflow, and peer text read with its length.
#include "plan_checks.h"

#include <gtest/gtest.h>

#include <cstring>

#include "options.h"

namespace railscope::netbench {
namespace {

SizePlan plan(uint64_t size, uint32_t recvs, uint32_t window, uint32_t messages = 2, uint32_t warmup = 0) {
  SizePlan p;
  p.size = size;
  p.recvs = recvs;
  p.window = window;
  p.messages = messages;
  p.warmup = warmup;
  return p;
}

void expect_refused(const std::optional<std::string>& why, const char* text) {
  ASSERT_TRUE(why.has_value()) << text;
  EXPECT_NE(why->find(text), std::string::npos) << *why;
}

TEST(NetbenchPlanChecks, EveryPlanTheClientMakesIsAccepted) {
  for (uint32_t recvs : {1u, 3u, 8u})
    for (uint32_t window : {1u, 7u, 32u}) {
      Options o;
      o.recvs = recvs;
      o.window = window;
      o.max_size = 1ULL << 30;
      o.buffer_cap = kMaxBufferBytes;
      const uint64_t region = region_bytes(o);
      RunParams p;
      p.buffer_bytes = region;
      EXPECT_FALSE(check_run_params(p)) << *check_run_params(p);
      for (uint64_t size : run_sizes(0, o.max_size)) {
        const auto why = check_size_plan(plan_size(o, size, region), region);
        EXPECT_FALSE(why) << size << ": " << *why;
      }
    }
}

// size 2^63 with one slot pair: 2^63 * 2 wraps to 0, which passed the old check, and prepare_slots then
// wrote 2^63 bytes.
TEST(NetbenchPlanChecks, SizeTimesSlotsMayNotWrap) {
  const uint64_t region = 1 << 20;
  expect_refused(check_size_plan(plan(uint64_t{1} << 63, 1, 1), region), "larger than netbench's largest");
  expect_refused(check_size_plan(plan(UINT64_MAX, 8, 32), region), "larger than netbench's largest");
  EXPECT_FALSE(check_size_plan(plan(1 << 19, 1, 1), region));  // 2 slots of 512K fit exactly
  expect_refused(check_size_plan(plan((1 << 19) + 1, 1, 1), region), "2 slots do not fit the 1048576-byte");
  EXPECT_FALSE(check_size_plan(plan(1 << 20, 8, 32, 8), UINT64_MAX));  // 257 MiB: no wrap, fits
}

TEST(NetbenchPlanChecks, CountsAndGroupingWithinNcclsLimits) {
  const uint64_t region = 1 << 20;
  expect_refused(check_size_plan(plan(8, 0, 1), region), "0 buffers per receive (1 to 8)");
  expect_refused(check_size_plan(plan(8, 9, 1), region), "9 buffers per receive");
  expect_refused(check_size_plan(plan(8, 1, 0), region), "window 0 (1 to 32)");
  expect_refused(check_size_plan(plan(8, 1, 33), region), "window 33");
  expect_refused(check_size_plan(plan(8, 4, 1, 6), region), "whole grouped receives of 4");
  expect_refused(check_size_plan(plan(8, 2, 1, 4, 3), region), "whole grouped receives of 2");
  expect_refused(check_size_plan(plan(8, 1, 1, 2, 5), region), "warmup 5 exceeds the 2 messages");
  SizePlan lat = plan(8, 1, 1, 0, 0);
  lat.lat_iters = 3;
  lat.lat_warmup = 4;
  expect_refused(check_size_plan(lat, region), "latency warmup 4 exceeds the 3 round trips");
}

TEST(NetbenchPlanChecks, RunParamsWithinBounds) {
  RunParams ok;
  ok.buffer_bytes = 4096;
  EXPECT_FALSE(check_run_params(ok));
  RunParams p = ok;
  p.buffer_bytes = UINT64_MAX - 100;  // page rounding wrapped to 0 in the old Region
  expect_refused(check_run_params(p), "netbench registers at most 2147483648 bytes");
  p.buffer_bytes = 0;
  expect_refused(check_run_params(p), "0-byte buffers");
  p = ok;
  p.verify = 2;
  expect_refused(check_run_params(p), "verify flag is 2");
  p = ok;
  p.modes = 4;
  expect_refused(check_run_params(p), "modes are 4");
  p.modes = 0;
  expect_refused(check_run_params(p), "modes are 0");
  p = ok;
  p.timeout_s = 0;
  expect_refused(check_run_params(p), "timeout is 0 s");
  p.timeout_s = UINT32_MAX;
  expect_refused(check_run_params(p), "timeout is 4294967295 s (1 to 86400)");
  p = ok;
  p.reserved = 1;
  expect_refused(check_run_params(p), "reserved");
}

// The server's first_mismatch is 200 bytes it need not terminate.
TEST(NetbenchPlanChecks, PeerTextIsCopiedWithItsLength) {
  PhaseResult r;
  std::memset(r.first_mismatch, 'x', sizeof r.first_mismatch);
  struct {
    PhaseResult result;
    char after[8] = {'A', 'F', 'T', 'E', 'R', '!', '!', 0};
  } wire;
  wire.result = r;
  const std::string text = peer_text(wire.result.first_mismatch, sizeof wire.result.first_mismatch);
  EXPECT_EQ(text, std::string(200, 'x'));
  const char with_nul[] = "ab\0cd";
  EXPECT_EQ(peer_text(with_nul, sizeof with_nul), "ab");
  const char controls[] = {'o', 'k', '\x1b', '[', '2', 'J', '\n'};
  EXPECT_EQ(peer_text(controls, sizeof controls), "ok?[2J?");
  EXPECT_EQ(peer_text(with_nul, 0), "");
}

}  // namespace
}  // namespace railscope::netbench
