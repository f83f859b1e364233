// SPDX-License-Identifier: Apache-2.0
// The monitor's verdict on one collective slot per scan (plugin/profiler/core/slot_scan.h), above all
// the orderings in which NCCL's threads stamp a slot after the scan took its time. A CI run once wrote
// a coll.hang for a healthy collective that started while the monitor was scanning: `now - start`
// had wrapped around.
#include <gtest/gtest.h>

#include "plugin/profiler/core/slot_scan.h"

namespace railscope::profiler {
namespace {

constexpr uint64_t kSec = 1'000'000'000;

ScanRules rules(bool tracks_kernel = true) {
  ScanRules r;
  r.grace_ns = 20'000'000;
  r.childless_ns = kSec;
  r.hang_ns = 300 * kSec;
  r.tracks_kernel = tracks_kernel;
  return r;
}

TEST(SlotScan, ACollectiveStartedAfterTheScanTookItsTimeIsNotAHang) {
  SlotStamps s;
  s.start_ns = 1000 * kSec + 5;  // stamped by NCCL's thread after the monitor read now
  EXPECT_EQ(scan_action(s, 1000 * kSec, rules()), SlotAction::Keep);
  EXPECT_EQ(scan_action(s, 1000 * kSec, rules(false)), SlotAction::Keep);
}

TEST(SlotScan, ACollectiveInFlightLongerThanTheLimitIsAHangOnce) {
  SlotStamps s;
  s.start_ns = 10 * kSec;
  EXPECT_EQ(scan_action(s, 309 * kSec, rules()), SlotAction::Keep);
  EXPECT_EQ(scan_action(s, 310 * kSec, rules()), SlotAction::ReportHang);
  s.hang_reported = true;
  EXPECT_EQ(scan_action(s, 400 * kSec, rules()), SlotAction::Keep);
}

TEST(SlotScan, ACompletedCollectiveWaitsTheGraceForLateChildren) {
  SlotStamps s;
  s.start_ns = 10 * kSec;
  s.stopped = true;
  s.stop_ns = 10 * kSec + 1;
  s.children_seen = 2;
  s.candidate_ns = 11 * kSec;
  EXPECT_EQ(scan_action(s, 11 * kSec + 19'000'000, rules()), SlotAction::Keep);
  EXPECT_EQ(scan_action(s, 11 * kSec + 20'000'000, rules()), SlotAction::WriteComplete);
  // Completed after the scan took its time: still in its grace, not written at once.
  EXPECT_EQ(scan_action(s, 11 * kSec - 1, rules()), SlotAction::Keep);
  // A child started again (alive): not complete whatever the candidate says.
  s.alive = 1;
  EXPECT_EQ(scan_action(s, 12 * kSec, rules()), SlotAction::Keep);
}

TEST(SlotScan, ForceWritesCompleteOrIncomplete) {
  ScanRules r = rules();
  r.force = true;
  SlotStamps s;
  s.start_ns = 10 * kSec;
  s.candidate_ns = 10 * kSec + 5;
  EXPECT_EQ(scan_action(s, 10 * kSec, r), SlotAction::WriteComplete);
  s.alive = 1;
  EXPECT_EQ(scan_action(s, 10 * kSec, r), SlotAction::WriteIncomplete);
}

TEST(SlotScan, AChildlessOpWithoutKernelEventsIsWrittenAfterASecondFromItsStop) {
  SlotStamps s;
  s.start_ns = 10 * kSec;
  s.stopped = true;
  s.stop_ns = 10 * kSec;
  EXPECT_EQ(scan_action(s, 10 * kSec + kSec - 1, rules(false)), SlotAction::Keep);
  EXPECT_EQ(scan_action(s, 11 * kSec, rules(false)), SlotAction::WriteComplete);
  // With KernelCh events a child always comes: no such shortcut.
  EXPECT_EQ(scan_action(s, 11 * kSec, rules(true)), SlotAction::Keep);
  // Stopped after the scan took its time.
  s.stop_ns = 12 * kSec;
  EXPECT_EQ(scan_action(s, 11 * kSec, rules(false)), SlotAction::Keep);
  // `stopped` already reads true but stop() has not stored its time yet.
  s.stop_ns = 0;
  EXPECT_EQ(scan_action(s, 11 * kSec, rules(false)), SlotAction::Keep);
  // A child came: the ordinary completion path applies.
  s.stop_ns = 10 * kSec;
  s.children_seen = 1;
  EXPECT_EQ(scan_action(s, 11 * kSec, rules(false)), SlotAction::Keep);
}

TEST(SlotScan, ReadStampsCopiesTheSlot) {
  CollSlot c;
  c.start_ns = 7;
  c.stopped.store(true);
  c.stop_ns.store(8);
  c.candidate_ns.store(9);
  c.alive.store(2);
  c.children_seen.store(3);
  c.hang_reported = true;
  const SlotStamps s = read_stamps(c);
  EXPECT_EQ(s.start_ns, 7u);
  EXPECT_TRUE(s.stopped);
  EXPECT_EQ(s.stop_ns, 8u);
  EXPECT_EQ(s.candidate_ns, 9u);
  EXPECT_EQ(s.alive, 2);
  EXPECT_EQ(s.children_seen, 3);
  EXPECT_TRUE(s.hang_reported);
}

}  // namespace
}  // namespace railscope::profiler
