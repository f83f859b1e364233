// Unit tests of `railscope report`'s reading and analysis on hand-written rows and files.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tools/report/analysis.h"
#include "tools/report/render.h"

namespace railscope::report {
namespace {

CollRow row(int rank, uint64_t seq, uint64_t start, double busbw) {
  CollRow r;
  r.comm = "0x1";
  r.rank = rank;
  r.nranks = 3;
  r.seq = seq;
  r.op = "AllReduce";
  r.bytes = 1 << 20;
  r.time_us = 100;
  r.busbw_gbs = busbw;
  r.start_unix_ns = start;
  return r;
}

TEST(ReportAnalysis, Percentiles) {
  EXPECT_DOUBLE_EQ(percentile({}, 50), 0.0);
  EXPECT_DOUBLE_EQ(percentile({3, 1, 2}, 50), 2.0);
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_DOUBLE_EQ(percentile(v, 99), 99.0);
  EXPECT_DOUBLE_EQ(percentile(v, 1), 1.0);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 100.0);
}

TEST(ReportAnalysis, StragglerIsTheRankThatStartsLast) {
  ProfileSet set;
  for (uint64_t s = 0; s < 10; ++s) {
    const uint64_t t = 1'000'000'000 + s * 10'000'000;
    set.colls.push_back(row(0, s, t, 10));
    set.colls.push_back(row(1, s, t + (s % 5 == 0 ? 3'000'000 : 0), 8));   // late 2 times in 10
    set.colls.push_back(row(2, s, t + (s % 5 == 0 ? 0 : 1'000'000), 12));  // late 8 times in 10
  }
  const Report r = analyse(set, nullptr);
  ASSERT_EQ(r.stragglers.size(), 3u);
  EXPECT_EQ(r.stragglers[0].rank, 2);
  EXPECT_EQ(r.stragglers[0].times_last, 8u);
  EXPECT_DOUBLE_EQ(r.stragglers[0].mean_late_us, 1000.0);
  EXPECT_EQ(r.stragglers[1].rank, 1);
  EXPECT_DOUBLE_EQ(r.stragglers[1].max_late_us, 3000.0);
  ASSERT_EQ(r.sizes.size(), 1u);
  EXPECT_EQ(r.sizes[0].rank_min, 1);
  EXPECT_EQ(r.sizes[0].rank_max, 2);
  EXPECT_EQ(r.heatmap.ranks.size(), 3u);
  EXPECT_EQ(r.heatmap.columns, 10u);
}

TEST(ReportAnalysis, BaselineRatioAndIncompleteRecordsExcluded) {
  ProfileSet run, base;
  run.colls.push_back(row(0, 0, 1, 20));
  CollRow bad = row(0, 1, 2, 1);
  bad.complete = false;
  run.colls.push_back(bad);
  base.colls.push_back(row(0, 0, 1, 10));
  const Report r = analyse(run, &base);
  ASSERT_EQ(r.sizes.size(), 1u);
  EXPECT_EQ(r.sizes[0].records, 1u);
  ASSERT_TRUE(r.sizes[0].baseline_busbw_p50);
  EXPECT_DOUBLE_EQ(*r.sizes[0].baseline_busbw_p50, 10.0);
  EXPECT_EQ(r.incomplete, 1u);
  EXPECT_NE(render_text(r).find("2.00"), std::string::npos);
}

TEST(ProfileReader, ToleratesUnknownTypesNewerVersionsAndGarbage) {
  const std::string dir = "/tmp/railscope-reader-unit";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/a.jsonl")
      << "{\"type\":\"header\",\"schema\":\"railscope.profile\",\"version\":2,\"hostname\":\"n1\"}\n"
      << "{\"type\":\"future_thing\",\"x\":1}\n"
      << "[1,2]\n"
      << "{\"type\":\"coll\",\"op\":\"AllReduce\",\"rank\":\"not a number\",\"bytes\":8,"
         "\"time_us\":1.0,\"busbw_gbs\":null,\"new_member\":{}}\n"
      << "{\"type\":\"diag\",\"id\":\"coll.hang\",\"seq\":3,\"rank\":1}\n";
  const ProfileSet s = read_profiles({dir});
  EXPECT_EQ(s.files.size(), 1u);
  ASSERT_EQ(s.colls.size(), 1u);
  EXPECT_EQ(s.colls[0].rank, -1);
  EXPECT_FALSE(s.colls[0].busbw_gbs);
  ASSERT_EQ(s.diags.size(), 1u);
  EXPECT_EQ(*s.diags[0].seq, 3u);
  EXPECT_EQ(s.diags[0].host, "n1");
  ASSERT_EQ(s.problems.size(), 2u);  // newer version note + the array line
  EXPECT_NE(s.problems[1].find("a.jsonl:3"), std::string::npos);
  EXPECT_THROW(read_profiles({dir + "/nope"}), std::runtime_error);
  std::filesystem::create_directories(dir + "/empty");
  EXPECT_THROW(read_profiles({dir + "/empty"}), std::runtime_error);
  std::filesystem::remove_all(dir);
}

TEST(ReportRender, HumanBytes) {
  EXPECT_EQ(human_bytes(8), "8 B");
  EXPECT_EQ(human_bytes(4096), "4 KiB");
  EXPECT_EQ(human_bytes(256u << 20), "256 MiB");
  EXPECT_EQ(human_bytes(1500), "1500 B");
}

}  // namespace
}  // namespace railscope::report
