// SPDX-License-Identifier: Apache-2.0
// Unit tests of `railscope report`'s reading and analysis on hand-written rows and files.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>

#include "plugin/profiler/core/jsonl_format.h"
#include "tools/report/analysis.h"
#include "tools/report/render.h"
#include "tools/report/svg_plot.h"

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

// The definition docs/profiler.md states, on a case worked by hand: 250 samples 1..250 (shuffled).
// Nearest rank takes the ceil(p/100 · n)-th smallest: p1 → ceil(2.5) = 3rd, p50 → ceil(125) = 125th,
// p99 → ceil(247.5) = 248th. Interpolating definitions would give 3.49, 125.5 and 247.51 instead.
// Four samples: p1 → ceil(0.04) = 1st, p99 → ceil(3.96) = 4th, p50 → 2nd (the lower middle).
TEST(ReportAnalysis, PercentilesByNearestRankOnAHandWorkedCase) {
  std::vector<double> v;
  for (int i = 0; i < 250; ++i) v.push_back((i * 97) % 250 + 1);  // 97 is prime to 250: a permutation
  EXPECT_DOUBLE_EQ(percentile(v, 1), 3.0);
  EXPECT_DOUBLE_EQ(percentile(v, 50), 125.0);
  EXPECT_DOUBLE_EQ(percentile(v, 99), 248.0);
  EXPECT_DOUBLE_EQ(percentile({40, 10, 30, 20}, 1), 10.0);
  EXPECT_DOUBLE_EQ(percentile({40, 10, 30, 20}, 50), 20.0);
  EXPECT_DOUBLE_EQ(percentile({40, 10, 30, 20}, 99), 40.0);
}

// busbw p1, p50 and p99 of one (op, size) over every sample of every rank, as the report prints them.
TEST(ReportAnalysis, BusbwP99IsOverEveryRanksSamples) {
  ProfileSet set;
  // Rank 0 runs at 1..100 GB/s, rank 1 at 101..200: the row's 200 samples are 1..200.
  for (uint64_t i = 1; i <= 100; ++i) {
    set.colls.push_back(row(0, i, i, static_cast<double>(i)));
    set.colls.push_back(row(1, i, i, static_cast<double>(100 + i)));
  }
  const Report r = analyse(set, nullptr);
  ASSERT_EQ(r.sizes.size(), 1u);
  EXPECT_DOUBLE_EQ(r.sizes[0].busbw_p1, 2.0);     // ceil(2) = 2nd
  EXPECT_DOUBLE_EQ(r.sizes[0].busbw_p50, 100.0);  // ceil(100) = 100th
  EXPECT_DOUBLE_EQ(r.sizes[0].busbw_p99, 198.0);  // ceil(198) = 198th
  const std::string text = render_text(r);
  EXPECT_NE(text.find("busbw p99"), std::string::npos) << text;
  EXPECT_NE(text.find("   100.00      2.00    198.00"), std::string::npos) << text;
  const auto j = nlohmann::json::parse(render_json(r));
  EXPECT_EQ(j.at("sizes").at(0).at("busbw_p99_gbs"), 198.0);
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

TEST(ReportRender, WaitMatrixTextShowsTheLargestCellsFirst) {
  ProfileSet set;
  CollRow c = row(0, 0, 1, 10);
  for (int peer = 1; peer <= 30; ++peer) c.waits.push_back({0, peer, false, 0, peer * 1000.0, 0, 0});
  set.colls.push_back(c);
  const Report r = analyse(set, nullptr);
  EXPECT_EQ(r.waits.size(), 30u);
  EXPECT_NE(r.wait_summary.find("peer 30 is waited on most"), std::string::npos) << r.wait_summary;
  const std::string text = render_text(r);
  EXPECT_LT(text.find("peer   30"), text.find("peer   29"));
  EXPECT_EQ(text.find("peer    1:"), std::string::npos);
  EXPECT_NE(text.find("10 more cells"), std::string::npos);
  EXPECT_NE(render_html(r).find("<svg class=\"heatmap\""), std::string::npos);
}

TEST(ReportRender, HumanBytes) {
  EXPECT_EQ(human_bytes(8), "8 B");
  EXPECT_EQ(human_bytes(4096), "4 KiB");
  EXPECT_EQ(human_bytes(256u << 20), "256 MiB");
  EXPECT_EQ(human_bytes(1500), "1500 B");
}

// Sizes near 2^64 went through double and back (undefined behaviour at 2^64); exact now.
TEST(ReportRender, HumanBytesIsExactUpTo2To64) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(std::numeric_limits<uint64_t>::max()), "18446744073709551615 B");
  EXPECT_EQ(human_bytes(std::numeric_limits<uint64_t>::max() - 1023),
            "18014398509481983 KiB");  // 2^64 - 1024
  EXPECT_EQ(human_bytes(uint64_t{1} << 63), "8388608 TiB");
  EXPECT_EQ(human_bytes(1234567), "1234567 B");
}

// A cell that is not finite (wait sums that overflowed) made the colour NaN → int.
TEST(ReportRender, HeatmapColoursStayInRangeForAnyValue) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::string svg =
      svg_heatmap("t", {"a", "b"}, {"0", "1", "2"}, {{inf, 1e308, 1.0}, {-inf, std::nan(""), 0.5}}, "ms");
  const std::regex fill("fill=\"rgb\\(255,(-?[0-9]+),(-?[0-9]+)\\)\"");
  int cells = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), fill); it != std::sregex_iterator(); ++it) {
    const int g = std::stoi((*it)[1].str());
    EXPECT_GE(g, 55) << svg;
    EXPECT_LE(g, 255) << svg;
    ++cells;
  }
  EXPECT_EQ(cells, 6);
  const std::string plot = svg_loglog_plot(
      "p",
      {{"s", "run", {{8, inf}, {inf, 2}, {16, 3}}, {{8, 1, inf}, {16, std::nan(""), 4}, {16, -1, 5}}, "b"}});
  EXPECT_NE(plot.find("<path class=\"series run\""), std::string::npos) << plot;
  EXPECT_NE(plot.find("<path class=\"band run\""), std::string::npos) << plot;
  EXPECT_EQ(plot.find("nan"), std::string::npos) << plot;
  EXPECT_EQ(plot.find("inf"), std::string::npos) << plot;
}

// Numbers a member cannot hold were converted with undefined behaviour (1e30 → uint64_t)
// and the record kept; now each such line is skipped and named with its line number.
TEST(ProfileReader, OutOfRangeNumbersSkipTheLineWithItsNumber) {
  const std::string dir = "/tmp/railscope-reader-range-unit";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string good =
      "{\"type\":\"coll\",\"op\":\"AllReduce\",\"rank\":0,\"bytes\":8,\"time_us\":1.0,"
      "\"start_unix_ns\":1764470000000000000}\n";
  std::ofstream(dir + "/a.jsonl")
      << "{\"type\":\"header\",\"schema\":\"railscope.profile\",\"version\":1,\"hostname\":\"n1\"}\n"
      << "{\"type\":\"coll\",\"start_unix_ns\":1e30}\n"                                    // 2
      << good                                                                              // 3
      << "{\"type\":\"coll\",\"rank\":5000000000}\n"                                       // 4
      << "{\"type\":\"coll\",\"bytes\":-8}\n"                                              // 5
      << "{\"type\":\"coll\",\"bytes\":18446744073709551616}\n"                            // 6
      << "{\"type\":\"coll\",\"time_us\":-1}\n"                                            // 7
      << "{\"type\":\"coll\",\"busbw_gbs\":1e300}\n"                                       // 8
      << "{\"type\":\"coll\",\"waits\":[{\"peer\":1,\"peer_wait_us\":1e308}]}\n"           // 9
      << "{\"type\":\"diag\",\"id\":\"coll.hang\",\"seq\":2.5}\n"                          // 10
      << "{\"type\":\"summary\",\"dropped\":{\"coll\":18446744073709551615,\"p2p\":1}}\n"  // 11
      << "{\"type\":\"coll\",\"nranks\":1.5e9,\"start_unix_ns\":1.5e18}\n"                 // 12: fits
      << good;                                                                             // 13
  const ProfileSet s = read_profiles({dir});
  ASSERT_EQ(s.colls.size(), 3u);
  EXPECT_EQ(s.colls[1].nranks, 1500000000);
  EXPECT_EQ(s.colls[1].start_unix_ns, 1500000000000000000u);
  EXPECT_TRUE(s.diags.empty());
  EXPECT_EQ(s.dropped_events, 0u);
  // The first five skipped lines one by one (with the member), then the count.
  ASSERT_EQ(s.problems.size(), 6u) << ::testing::PrintToString(s.problems);
  EXPECT_NE(s.problems[0].find("a.jsonl:2: start_unix_ns = 1e+30 is not an integer"), std::string::npos)
      << s.problems[0];
  EXPECT_NE(s.problems[1].find("a.jsonl:4: rank"), std::string::npos) << s.problems[1];
  EXPECT_NE(s.problems[2].find("a.jsonl:5: bytes"), std::string::npos) << s.problems[2];
  EXPECT_NE(s.problems[3].find("a.jsonl:6: bytes"), std::string::npos) << s.problems[3];
  EXPECT_NE(s.problems[4].find("a.jsonl:7: time_us = -1"), std::string::npos) << s.problems[4];
  EXPECT_NE(s.problems[5].find("a.jsonl: 9 lines skipped in all (4 more than listed above)"),
            std::string::npos)
      << s.problems[5];
  // Nothing downstream sees an out-of-range number.
  // The report keeps the count for its JSON; the text output leaves warnings to stderr (report_command.cpp).
  const Report r = analyse(s, nullptr);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_NE(r.problems.back().find("9 lines skipped"), std::string::npos) << r.problems.back();
  EXPECT_EQ(render_text(r).find("lines skipped"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// The writer passed invalid UTF-8 through (a tag, a comm name, a detail), and the reader,
// which takes only valid JSON, dropped the line. Now the bytes become U+FFFD and the line round-trips.
TEST(ProfileReader, InvalidUtf8FromTheWriterRoundTripsAsReplacementCharacters) {
  const std::string dir = "/tmp/railscope-reader-utf8-unit";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  profiler::HeaderInfo h;
  h.hostname = "n\xc3\xa9";        // "né": valid, kept
  h.tag = "run\xff\xfe-\xe2\x82";  // two stray bytes and a cut "€"
  h.pid = 1;
  profiler::CommIdentity c;
  c.hash = 1;
  c.rank = 0;
  diag::Finding f = diag::make("coll.hang", "peer \xc0\xaf host \xed\xa0\x80");  // overlong, surrogate
  profiler::DiagContext ctx;
  ctx.comm = &c;
  ctx.rank = 0;
  ctx.op = "AllReduce";
  std::ofstream(dir + "/p.jsonl") << profiler::format_header(h) << profiler::format_diag(f, ctx);
  const ProfileSet s = read_profiles({dir});
  EXPECT_TRUE(s.problems.empty()) << ::testing::PrintToString(s.problems);
  ASSERT_EQ(s.hosts.size(), 1u);
  EXPECT_EQ(s.hosts[0], "n\xc3\xa9");
  ASSERT_EQ(s.tags.size(), 1u);
  EXPECT_EQ(s.tags[0], "run\xef\xbf\xbd\xef\xbf\xbd-\xef\xbf\xbd\xef\xbf\xbd");
  ASSERT_EQ(s.diags.size(), 1u);
  EXPECT_EQ(s.diags[0].detail, "peer \xef\xbf\xbd\xef\xbf\xbd host \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace railscope::report

// The straggler map's tooltips: collective numbers (not bin indices) and µs before/after the median rank,
// never a negative duration.
TEST(ReportRender, HeatmapTooltipsNameCollectivesAndMicroseconds) {
  using namespace railscope::report;
  EXPECT_EQ(lateness_tooltip(3, 17, 17, 120, 12.34),
            "rank 3, collective 17 of 120: arrived 12.3 µs after the median rank");
  EXPECT_EQ(lateness_tooltip(0, 1, 2, 120, -8.0),
            "rank 0, collectives 1–2 of 120: arrived 8.0 µs before the median rank (mean)");
  EXPECT_EQ(lateness_tooltip(1, 5, 5, 5, 0.0), "rank 1, collective 5 of 5: arrived with the median rank");
  const std::string svg =
      svg_heatmap("t", {"rank 0"}, {"1", "3"}, {{-8.0, 4.0}}, "µs",
                  {{lateness_tooltip(0, 1, 2, 4, -8.0), lateness_tooltip(0, 3, 4, 4, 4.0)}});
  EXPECT_NE(
      svg.find("<title>rank 0, collectives 1–2 of 4: arrived 8.0 µs before the median rank (mean)</title>"),
      std::string::npos)
      << svg;
  EXPECT_EQ(svg.find("-8.0"), std::string::npos) << svg;
  // Without tooltips (the wait matrix): row / column: value unit.
  EXPECT_NE(svg_heatmap("t", {"a"}, {"b"}, {{1.5}}, "ms").find("<title>a / b: 1.5 ms</title>"),
            std::string::npos);
}
