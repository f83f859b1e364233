// SPDX-License-Identifier: Apache-2.0
// `railscope report --follow` as a watchdog runs it, on a job's profiles written by the test: a finished
// job, one still progressing, a hang (the rank that never entered the collective the others wait in,
// with its host), a count mismatch, and a line appended in pieces between two passes (read once, neither
// lost nor counted twice). Each fault has a healthy twin that exits 0 and names nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "unit/cli/cli_process.h"
#include "unit/profiler/job_profiles.h"

namespace railscope::testing_job {
namespace {

using testing_cli::Child;
using testing_cli::Ran;

// The unix time 20 s ago: ranks that entered a collective then have waited 20 s.
uint64_t twenty_s_ago() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()) -
         20'000'000'000;
}

Ran follow_once(const JobDir& dir, const std::string& hang_after = "300") {
  return testing_cli::run(
      {RAILSCOPE_CLI, "report", "--follow", dir.path(), "--once", "--hang-after", hang_after});
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

void finished_job(JobDir& dir, uint64_t n) {
  for (int r = 0; r < 4; ++r) dir.rank(r, node_of(r), finished(r, n));
}

TEST(ReportFollowCli, FinishedJobExitsZero) {
  JobDir dir("rs-follow-finished");
  finished_job(dir, 8);
  const Ran r = follow_once(dir);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "finished: every rank of 1 communicator(s) finalized (4 ranks)")) << r.out;
  EXPECT_EQ(r.err, "");
  // Without --once it stops at the first pass that sees the job finished.
  const Ran w = testing_cli::run({RAILSCOPE_CLI, "report", "--follow", dir.path(), "--interval", "0.05"});
  EXPECT_EQ(w.status, 0) << w.out << w.err;
}

TEST(ReportFollowCli, ProgressingJobOnceExitsOne) {
  JobDir dir("rs-follow-running");
  for (int r = 0; r < 4; ++r) dir.rank(r, node_of(r), colls(r, 8));
  const Ran r = follow_once(dir);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_TRUE(
      has(r.out, "progressing: 1 communicator(s), 4 ranks; communicator 0x1 furthest at AllReduce #7"))
      << r.out;
  EXPECT_FALSE(has(r.out, "hang") || has(r.out, "mismatch") || has(r.out, "waiting")) << r.out;
  EXPECT_EQ(r.err, "");
}

// Ranks 0, 1, 3 wait in collective #5 for 20 s; rank 2 on nodeB completed #4 and never entered #5.
void hung_job(JobDir& dir) {
  const uint64_t t0 = twenty_s_ago();
  for (int r : {0, 1, 3}) dir.rank(r, node_of(r), waiting_in(r, 5, kCount, t0));
  dir.rank(2, "nodeB", colls(2, 5));
}

TEST(ReportFollowCli, HangNamesTheRankThatNeverEnteredAndExitsThree) {
  JobDir dir("rs-follow-hang");
  hung_job(dir);
  const Ran r = follow_once(dir, "10");
  EXPECT_EQ(r.status, 3) << r.out << r.err;
  EXPECT_TRUE(has(r.out,
                  "hang: 3 of 4 ranks wait in AllReduce #5 (seq 5, count 262144 ncclFloat32) of "
                  "communicator 0x1 for 2"))  // 20 s, give or take the test's own run time
      << r.out;
  EXPECT_TRUE(has(r.out, "; rank 2 (nodeB pid 1002) never entered it")) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(ReportFollowCli, WaitingShorterThanHangAfterIsNoHangYet) {
  JobDir dir("rs-follow-wait");
  hung_job(dir);
  const Ran r = follow_once(dir, "1000");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "waiting: 3 of 4 ranks wait in AllReduce #5")) << r.out;
  EXPECT_TRUE(has(r.out, "(a hang after 1000 s)")) << r.out;
}

TEST(ReportFollowCli, HealthyTwinOfTheHangExitsZero) {
  JobDir dir("rs-follow-hang-twin");
  finished_job(dir, 6);  // rank 2 entered and completed #5 like the others
  const Ran r = follow_once(dir, "10");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_FALSE(has(r.out, "hang") || has(r.out, "never entered")) << r.out;
}

TEST(ReportFollowCli, MismatchNamesTheOddRankAndExitsFour) {
  JobDir dir("rs-follow-mismatch");
  // Collective #3: rank 1 passed half the elements; every rank waits in it.
  for (int r = 0; r < 4; ++r)
    dir.rank(r, node_of(r), waiting_in(r, 3, r == 1 ? kCount / 2 : kCount, twenty_s_ago()));
  const Ran r = follow_once(dir);
  EXPECT_EQ(r.status, 4) << r.out << r.err;
  EXPECT_TRUE(has(r.out, fmt::format("mismatch: communicator 0x1, collective #3: 1 rank(s) (e.g. rank 1 on "
                                     "nodeA) called AllReduce count {} ncclFloat32, 3 rank(s) called "
                                     "AllReduce count {} ncclFloat32",
                                     kCount / 2, kCount)))
      << r.out;
}

TEST(ReportFollowCli, HealthyTwinOfTheMismatchExitsZero) {
  JobDir dir("rs-follow-mismatch-twin");
  finished_job(dir, 4);
  const Ran r = follow_once(dir);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_FALSE(has(r.out, "mismatch")) << r.out;
}

// Rank 1's record of collective #3 is written in three pieces, the test adding each after a pass of
// the follower. `odd` makes it another count than the others' (a mismatch once the line is whole).
struct TornRun {
  int status = -1;
  std::vector<std::string> lines;
  std::string err;
};
TornRun follow_a_torn_line(JobDir& dir, bool odd) {
  for (int r : {0, 2, 3})
    dir.rank(r, node_of(r), odd ? waiting_in(r, 3, kCount, twenty_s_ago()) : finished(r, 4));
  const std::string record = coll(1, 3, true, odd ? kCount / 2 : kCount) + "\n" + summary(1) + "\n";
  const size_t third = record.size() / 3;
  const std::vector<std::string> pieces = {record.substr(0, third), record.substr(third, third),
                                           record.substr(2 * third)};
  dir.rank(1, "nodeA", colls(1, 3));
  dir.append(1, "nodeA", pieces[0]);
  Child c({RAILSCOPE_CLI, "report", "--follow", dir.path(), "--interval", "0.2", "--hang-after", "100000"});
  TornRun out;
  for (size_t i = 1; i <= pieces.size(); ++i) {
    std::optional<std::string> line = c.next_line(std::chrono::seconds(30));
    if (!line) break;
    out.lines.push_back(*line);
    if (i < pieces.size()) dir.append(1, "nodeA", pieces[i]);
  }
  out.status = c.wait(std::chrono::seconds(30));
  for (std::optional<std::string> l; (l = c.next_line(std::chrono::milliseconds(0)));)
    out.lines.push_back(*l);
  out.err = c.err();
  return out;
}

TEST(ReportFollowCli, ALineAppendedBetweenPassesIsReadOnce) {
  JobDir dir("rs-follow-torn");
  const TornRun r = follow_a_torn_line(dir, /*odd=*/true);
  ASSERT_GE(r.lines.size(), 3u) << r.err;
  // Before the line is whole, rank 1 is behind (its #3 not read), and no fragment was taken for a line.
  EXPECT_TRUE(has(r.lines[0], "rank 1 (nodeA pid 1001) never entered it")) << r.lines[0];
  EXPECT_TRUE(has(r.lines[1], "rank 1 (nodeA pid 1001) never entered it")) << r.lines[1];
  EXPECT_EQ(r.status, 4);
  // Counted once: one rank called the odd count (twice if read twice), three the usual one.
  EXPECT_TRUE(has(r.lines.back(),
                  "1 rank(s) (e.g. rank 1 on nodeA) called AllReduce count 131072 "
                  "ncclFloat32, 3 rank(s) called AllReduce count 262144"))
      << r.lines.back();
  EXPECT_EQ(r.err, "");
}

TEST(ReportFollowCli, HealthyTwinOfTheTornLineFinishes) {
  JobDir dir("rs-follow-torn-twin");
  const TornRun r = follow_a_torn_line(dir, /*odd=*/false);
  ASSERT_FALSE(r.lines.empty()) << r.err;
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(has(r.lines.back(), "finished: every rank of 1 communicator(s) finalized (4 ranks)"))
      << r.lines.back();
  for (const std::string& l : r.lines) EXPECT_FALSE(has(l, "mismatch") || has(l, "hang")) << l;
  EXPECT_EQ(r.err, "");
}

// A rank whose profile appears after the first pass (it started late) is read from its start.
TEST(ReportFollowCli, AFileThatAppearsLaterIsRead) {
  JobDir dir("rs-follow-late");
  for (int r = 0; r < 3; ++r) dir.rank(r, node_of(r), finished(r, 4));
  Child c({RAILSCOPE_CLI, "report", "--follow", dir.path(), "--interval", "0.2"});
  const std::optional<std::string> first = c.next_line(std::chrono::seconds(30));
  ASSERT_TRUE(first);
  EXPECT_TRUE(has(*first, "progressing: 1 communicator(s), 3 ranks")) << *first;
  dir.rank(3, node_of(3), finished(3, 4));
  EXPECT_EQ(c.wait(std::chrono::seconds(30)), 0) << c.out() << c.err();
  EXPECT_TRUE(has(c.out(), "finished: every rank of 1 communicator(s) finalized (4 ranks)")) << c.out();
  EXPECT_EQ(c.err(), "");
}

}  // namespace
}  // namespace railscope::testing_job
