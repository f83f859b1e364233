// SPDX-License-Identifier: Apache-2.0
// ProfileTail reads each line of a growing profile exactly once: a line the writer cut back to the last
// whole one (the profiler does when a write stops part-way) and then wrote again, a file replaced under
// its name (rotated), a file that shrank below what was read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tools/report/profile_tail.h"
#include "unit/profiler/job_profiles.h"

namespace railscope::report {
namespace {

using namespace testing_job;

// How many ranks called collective #ord of communicator 0x1, as the job state counted them.
size_t votes(const JobState& job, uint64_t ord) {
  const auto& lanes = job.lanes();
  const auto it = lanes.find({"0x1", ""});
  if (it == lanes.end()) return 0;
  const auto place = it->second.recent.find(ord);
  size_t n = 0;
  if (place != it->second.recent.end())
    for (const CallVariant& v : place->second) n += v.ranks;
  return n;
}

// A tail over one job directory, the job state it feeds and the problems it found.
struct Follower {
  ProfileTail tail;
  JobState job;
  std::vector<std::string> problems;
  void poll(const JobDir& dir) { tail.poll({dir.path()}, job, problems); }
};

TEST(ProfileTail, ALineCutBackAndWrittenAgainIsReadOnce) {
  JobDir dir("rs-tail-cut");
  dir.rank(0, "nodeA", colls(0, 2));
  const std::string file = dir.file(0, "nodeA");
  const auto whole = std::filesystem::file_size(file);
  Follower f;
  // Half of record #2 reached the file, then the writer cut it back and wrote the whole record.
  const std::string record = coll(0, 2) + "\n";
  dir.append(0, "nodeA", record.substr(0, record.size() / 2));
  f.poll(dir);
  EXPECT_EQ(votes(f.job, 1), 1u);
  EXPECT_EQ(votes(f.job, 2), 0u);
  std::filesystem::resize_file(file, whole);
  f.poll(dir);
  dir.append(0, "nodeA", record);
  f.poll(dir);
  EXPECT_EQ(votes(f.job, 0), 1u);
  EXPECT_EQ(votes(f.job, 1), 1u);
  EXPECT_EQ(votes(f.job, 2), 1u);
  EXPECT_TRUE(f.problems.empty()) << f.problems.front();
}

TEST(ProfileTail, ARotatedFileIsReadFromItsStartWithAWarning) {
  JobDir dir("rs-tail-rotated");
  dir.rank(0, "nodeA", colls(0, 3));
  Follower f;
  f.poll(dir);
  ASSERT_TRUE(f.problems.empty()) << f.problems.front();
  // Moved away (no longer *.jsonl) and a new, longer file under the old name with the next records.
  const std::string file = dir.file(0, "nodeA");
  std::filesystem::rename(file, file + ".1");
  std::vector<std::string> next;
  for (uint64_t i = 3; i < 9; ++i) next.push_back(coll(0, i));
  dir.rank(0, "nodeA", next);
  f.poll(dir);
  ASSERT_EQ(f.problems.size(), 1u);
  EXPECT_NE(f.problems[0].find("replaced by another file; reading it from its start"), std::string::npos)
      << f.problems[0];
  for (uint64_t i = 0; i < 9; ++i) EXPECT_EQ(votes(f.job, i), 1u) << "#" << i;
}

TEST(ProfileTail, AFileThatShrankIsReadAgainWithAWarning) {
  JobDir dir("rs-tail-shrank");
  dir.rank(0, "nodeA", colls(0, 4));
  Follower f;
  f.poll(dir);
  dir.rank(0, "nodeA", {coll(0, 4)});  // truncated in place and rewritten (copytruncate)
  f.poll(dir);
  ASSERT_EQ(f.problems.size(), 1u);
  EXPECT_NE(f.problems[0].find("shrank from"), std::string::npos) << f.problems[0];
  EXPECT_EQ(votes(f.job, 4), 1u);
  EXPECT_EQ(votes(f.job, 3), 1u);
}

}  // namespace
}  // namespace railscope::report
