// SPDX-License-Identifier: Apache-2.0
// `railscope report` over every rank's profile of one job, written by the test as the profiler writes
// them: the ranks that never entered the collective the others wait in (with their host), a count
// mismatch at one place of the communicator's order, a killed job (a torn last line, a rank without a
// profile), and the healthy twin of each, which must print no job finding.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/report/analysis.h"
#include "tools/report/render.h"
#include "unit/profiler/job_profiles.h"

namespace railscope::report {
namespace {

using namespace testing_job;

// The finding is about `rank` on `host`, at collective #ord.
void expect_names(const DiagRow& d, int rank, const std::string& host, uint64_t ord) {
  EXPECT_EQ(d.rank, rank);
  EXPECT_EQ(d.host, host);
  ASSERT_TRUE(d.ord);
  EXPECT_EQ(*d.ord, ord);
}

struct Read {
  Report report;
  std::string text;
  nlohmann::json json;
};

Read report_of(const JobDir& dir) {
  const ProfileSet set = read_profiles({dir.path()});
  Read r{analyse(set, nullptr), "", {}};
  r.text = render_text(r.report);
  r.json = nlohmann::json::parse(render_json(r.report));
  return r;
}

std::vector<const DiagRow*> findings(const Report& r, const std::string& id) {
  std::vector<const DiagRow*> out;
  for (const DiagRow& d : r.diags)
    if (d.id == id) out.push_back(&d);
  return out;
}

size_t job_findings_in(const Report& r) {
  return std::count_if(r.diags.begin(), r.diags.end(),
                       [](const DiagRow& d) { return d.id.rfind("job.", 0) == 0; });
}

TEST(ReportJobState, NamesTheRankThatNeverEnteredAndItsHost) {
  JobDir dir("rs-job-hung");
  // Ranks 0, 1, 3 entered collective #5 and wait in it; rank 2 (on nodeB) completed #4 and never called #5.
  for (int r : {0, 1, 3}) dir.rank(r, node_of(r), stuck_in(r, 5));
  dir.rank(2, "nodeB", colls(2, 5));
  const Read r = report_of(dir);

  const auto absent = findings(r.report, "job.rank_absent");
  ASSERT_EQ(absent.size(), 1u) << r.text;
  expect_names(*absent[0], 2, "nodeB", 5);
  EXPECT_NE(absent[0]->detail.find("rank 2 (host nodeB, pid 1002) never entered it"), std::string::npos)
      << absent[0]->detail;
  EXPECT_NE(absent[0]->detail.find("3 of 4 ranks wait in AllReduce #5"), std::string::npos)
      << absent[0]->detail;
  EXPECT_TRUE(findings(r.report, "job.call_mismatch").empty()) << r.text;
  EXPECT_TRUE(findings(r.report, "job.rank_no_profile").empty()) << r.text;

  EXPECT_NE(r.text.find("STUCK"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("behind: rank 2 (nodeB pid 1002)"), std::string::npos) << r.text;
  ASSERT_EQ(r.json.at("job").size(), 1u) << r.json.dump();
  const nlohmann::json& lane = r.json.at("job")[0];
  EXPECT_EQ(lane.at("stuck"), true);
  EXPECT_EQ(lane.at("frontier").at("index"), 5);
  EXPECT_EQ(lane.at("frontier").at("count"), kCount);
  EXPECT_EQ(lane.at("waiting"), 3);
  EXPECT_EQ(lane.at("behind"), nlohmann::json::array({2}));
}

TEST(ReportJobState, NamesTheRankThatCalledAnotherCount) {
  JobDir dir("rs-job-mismatch");
  // Collective #3: rank 1 passed half the elements (an uneven last batch); everyone waits in it.
  for (int r = 0; r < 4; ++r) dir.rank(r, node_of(r), stuck_in(r, 3, r == 1 ? kCount / 2 : kCount));
  const Read r = report_of(dir);
  const auto mismatch = findings(r.report, "job.call_mismatch");
  ASSERT_EQ(mismatch.size(), 1u) << r.text;
  expect_names(*mismatch[0], 1, "nodeA", 3);
  EXPECT_NE(
      mismatch[0]->detail.find(fmt::format("1 rank 1 called AllReduce count {} ncclFloat32", kCount / 2)),
      std::string::npos)
      << mismatch[0]->detail;
  EXPECT_NE(mismatch[0]->detail.find(fmt::format("3 ranks 0, 2, 3 called AllReduce count {}", kCount)),
            std::string::npos)
      << mismatch[0]->detail;
  EXPECT_FALSE(mismatch[0]->fix.empty());
  EXPECT_TRUE(findings(r.report, "job.rank_absent").empty()) << r.text;
  EXPECT_NE(r.text.find("[job.call_mismatch]"), std::string::npos) << r.text;
  EXPECT_EQ(r.json.at("job")[0].at("mismatches"), 1);
}

TEST(ReportJobState, KilledJobWithATornLineAndARankWithoutProfile) {
  JobDir dir("rs-job-killed");
  // The job was killed: ranks 0 and 1 were writing collective #7 (cut mid-line), rank 2 stopped after
  // #4 and never entered #5, rank 3's node was not collected.
  for (int r : {0, 1}) dir.rank(r, "nodeA", colls(r, 8), /*torn=*/true);
  dir.rank(2, "nodeB", colls(2, 5), /*torn=*/true);
  const Read r = report_of(dir);

  EXPECT_EQ(
      std::count_if(r.report.problems.begin(), r.report.problems.end(),
                    [](const std::string& p) { return p.find("ends mid-record") != std::string::npos; }),
      3)
      << r.text;
  const auto none = findings(r.report, "job.rank_no_profile");
  ASSERT_EQ(none.size(), 1u) << r.text;
  EXPECT_EQ(none[0]->rank, 3);
  EXPECT_NE(none[0]->detail.find("no record of ranks 3 (1 of 4)"), std::string::npos) << none[0]->detail;
  const nlohmann::json& lane = r.json.at("job")[0];
  EXPECT_EQ(lane.at("missing"), nlohmann::json::array({3}));
  EXPECT_EQ(lane.at("behind"), nlohmann::json::array({2}));
  EXPECT_EQ(lane.at("frontier").at("index"), 7);
  EXPECT_EQ(lane.at("ranks")[2].at("completed").at("index"), 4);
  EXPECT_NE(r.text.find("behind: rank 2 (nodeB pid 1002): last entered AllReduce #4"), std::string::npos)
      << r.text;
}

TEST(ReportJobState, HealthyTwinPrintsNoJobProblem) {
  JobDir dir("rs-job-healthy");
  for (int r = 0; r < 4; ++r) dir.rank(r, node_of(r), finished(r, 8));
  const Read r = report_of(dir);
  EXPECT_EQ(job_findings_in(r.report), 0u) << r.text;
  EXPECT_TRUE(r.report.problems.empty()) << r.text;
  EXPECT_EQ(r.text.find("STUCK"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("behind:"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("no profile"), std::string::npos) << r.text;
  const nlohmann::json& lane = r.json.at("job")[0];
  EXPECT_EQ(lane.at("stuck"), false);
  EXPECT_EQ(lane.at("finished"), true);
  EXPECT_EQ(lane.at("mismatches"), 0);
  EXPECT_TRUE(lane.at("behind").empty());
  EXPECT_TRUE(lane.at("missing").empty());
}

// Profiles of ABI v1..v3 carry no rank count: busbw comes from the ranks of the communicator in the
// input, and without them it is unknown ("—", null), never algbw under the busbw heading.
TEST(ReportJobState, BusbwWithoutRankCountFromTheRanksInTheInput) {
  JobDir all("rs-job-v3-all");
  for (int r = 0; r < 4; ++r) {
    std::vector<std::string> l;
    for (uint64_t i = 0; i < 3; ++i) l.push_back(coll(r, i, true, kCount, /*nranks=*/0));
    all.rank(r, "nodeA", l);
  }
  const Read a = report_of(all);
  ASSERT_EQ(a.report.sizes.size(), 1u) << a.text;
  EXPECT_EQ(a.report.sizes[0].nranks, 4);
  EXPECT_TRUE(a.report.sizes[0].nranks_from_input);
  ASSERT_TRUE(a.report.sizes[0].has_busbw);
  // AllReduce over 4 ranks: algbw 4 MiB / 100 us = 10.49 GB/s, busbw = algbw * 2 * 3 / 4.
  EXPECT_NEAR(a.report.sizes[0].algbw_p50, 10.49, 0.01);
  EXPECT_NEAR(a.report.sizes[0].busbw_p50, 10.49 * 1.5, 0.02);

  JobDir one("rs-job-v3-one");
  std::vector<std::string> l;
  for (uint64_t i = 0; i < 3; ++i) l.push_back(coll(1, i, true, kCount, /*nranks=*/0));
  one.rank(1, "nodeA", l);
  const Read o = report_of(one);
  ASSERT_EQ(o.report.sizes.size(), 1u) << o.text;
  EXPECT_FALSE(o.report.sizes[0].has_busbw);
  EXPECT_NE(o.text.find("—"), std::string::npos) << o.text;
  const nlohmann::json& row = o.json.at("sizes")[0];
  EXPECT_TRUE(row.at("busbw_p50_gbs").is_null()) << row.dump();
  EXPECT_GT(row.at("algbw_p50_gbs").get<double>(), 10.0) << row.dump();
}

// A file read as it grows (`--follow`) gives a stuck rank's coll.hang before its incomplete `coll`
// record: each rank still counts once among the calls of that place.
TEST(ReportJobState, StuckRankCountsOnceWhateverTheOrderOfItsRecords) {
  JobState job;
  for (int r = 0; r < 4; ++r) {
    DiagRow d;
    d.id = "coll.hang";
    d.comm = "0x1";
    d.rank = r;
    d.op = "AllReduce";
    d.seq = 3;
    d.ord = 3;
    d.count = r == 1 ? kCount / 2 : kCount;
    d.dtype = "ncclFloat32";
    job.add_diag(d, "nodeA", 1000 + r);
    CollRow c;
    c.comm = "0x1";
    c.rank = r;
    c.nranks = 4;
    c.op = "AllReduce";
    c.seq = 3;
    c.ord = 3;
    c.count = d.count;
    c.dtype = "ncclFloat32";
    c.complete = false;
    job.add_coll(c, "nodeA", 1000 + r);
  }
  const std::vector<LaneVerdict> v = job.verdicts();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].waiting, 4u);
  ASSERT_EQ(v[0].mismatches.size(), 1u);
  ASSERT_EQ(v[0].mismatches[0].variants.size(), 2u);
  EXPECT_EQ(v[0].mismatches[0].variants[0].ranks, 3u);
  EXPECT_EQ(v[0].mismatches[0].variants[1].ranks, 1u);
  EXPECT_EQ(v[0].mismatches[0].variants[1].examples, std::vector<int>{1});
}

// A record's rank count sizes nothing: a file claiming 2^31 - 1 ranks is read at once, naming the
// first ranks without a profile and counting the others.
TEST(ReportJobState, AHugeRankCountIsCountedNotListed) {
  JobDir dir("rs-job-huge");
  dir.rank(0, "nodeA", {coll(0, 0, true, kCount, 2147483647)});
  const Read r = report_of(dir);
  const nlohmann::json& lane = r.json.at("job")[0];
  EXPECT_EQ(lane.at("missing_total"), 2147483646u);
  EXPECT_EQ(lane.at("missing").size(), kMissingListed);
  EXPECT_EQ(lane.at("missing")[0], 1);
  const auto none = findings(r.report, "job.rank_no_profile");
  ASSERT_EQ(none.size(), 1u) << r.text;
  EXPECT_NE(none[0]->detail.find("(2147483646 of 2147483647)"), std::string::npos) << none[0]->detail;
}

}  // namespace
}  // namespace railscope::report
