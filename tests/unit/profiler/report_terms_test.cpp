// SPDX-License-Identifier: Apache-2.0
// `railscope report`: nccl-tests' terms (count = elements, datatype, algbw and busbw,
// percentiles named for what they are), sections shown only when they have something, the A/B page naming
// the transports, a single-size plot drawn sensibly, and the fabric records (per-port table, time line).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include "tools/report/analysis.h"
#include "tools/report/render.h"
#include "tools/report/svg_plot.h"

namespace railscope::report {
namespace {

CollRow sample(int rank, double busbw, double time_us) {
  CollRow r;
  r.comm = "0x1";
  r.rank = rank;
  r.nranks = 2;
  r.op = "AllReduce";
  r.dtype = "ncclFloat32";
  r.count = 262144;
  r.bytes = 1 << 20;
  r.time_us = time_us;
  r.algbw_gbs = busbw / 2.0;
  r.busbw_gbs = busbw;
  return r;
}

TEST(ReportTerms, CountIsElementsAndPercentilesAreNamedForWhatTheyAre) {
  ProfileSet set;
  for (int i = 1; i <= 100; ++i) set.colls.push_back(sample(i % 2, i, i));
  const Report r = analyse(set, nullptr);
  ASSERT_EQ(r.sizes.size(), 1u);
  const SizeRow& s = r.sizes[0];
  EXPECT_EQ(s.count, 262144u) << "elements, as nccl-tests' count";
  EXPECT_EQ(s.records, 100u);
  EXPECT_EQ(s.dtype, "ncclFloat32");
  EXPECT_DOUBLE_EQ(s.busbw_p1, 1.0) << "the slow tail: 99 % of samples reach at least this";
  EXPECT_DOUBLE_EQ(s.busbw_p50, 50.0);
  EXPECT_DOUBLE_EQ(s.algbw_p50, 25.0);
  EXPECT_DOUBLE_EQ(s.busbw_p99, 99.0) << "the fast edge: 99 % of samples reach at most this";
  EXPECT_DOUBLE_EQ(s.time_p99_us, 99.0);

  const std::string text = render_text(r);
  for (const char* column :
       {"count", "type", "redop", "samples", "algbw p50", "busbw p50", "busbw p1", "busbw p99"})
    EXPECT_NE(text.find(column), std::string::npos) << column << "\n" << text;
  EXPECT_NE(text.find("1048576      262144   Float32"), std::string::npos) << text;

  const auto j = nlohmann::json::parse(render_json(r));
  const auto& row = j.at("sizes").at(0);
  EXPECT_EQ(row.at("count"), 262144);
  EXPECT_EQ(row.at("records"), 100);
  EXPECT_EQ(row.at("dtype"), "ncclFloat32");
  EXPECT_EQ(row.at("busbw_p1_gbs"), 1.0);
  EXPECT_EQ(row.at("busbw_p99_gbs"), 99.0);
  EXPECT_EQ(row.at("algbw_p50_gbs"), 25.0);

  const std::string html = render_html(r);
  EXPECT_NE(html.find("<th>busbw p1</th><th>busbw p99</th>"), std::string::npos);
  EXPECT_NE(html.find("<td>50.00</td><td>1.00</td><td>99.00</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>262144</td><td class=\"l\">ncclFloat32</td>"), std::string::npos);
}

TEST(ReportTerms, EmptySectionsAreNotShown) {
  ProfileSet only_diag;
  DiagRow d;
  d.id = "coll.hang";
  only_diag.diags.push_back(d);
  const Report a = analyse(only_diag, nullptr);
  const std::string text = render_text(a), html = render_html(a);
  for (const char* absent : {"Per (op, size)", "Stragglers", "wait matrix", "Fabric"})
    EXPECT_EQ(text.find(absent), std::string::npos) << absent << "\n" << text;
  for (const char* absent : {"<h2>Bus bandwidth", "<h2>Per (op", "<h2>Stragglers", "<h2>Rank", "<h2>Fabric"})
    EXPECT_EQ(html.find(absent), std::string::npos) << absent;
  EXPECT_NE(html.find("<h2>Diagnoses (1)"), std::string::npos);

  // No straggler (one rank), no waits, no diagnosis: a communicator of one rank, so none lacks a
  // profile (job.rank_no_profile).
  ProfileSet one_rank;
  one_rank.colls.push_back(sample(0, 10, 100));
  one_rank.colls.back().nranks = 1;
  const Report b = analyse(one_rank, nullptr);
  const std::string text_b = render_text(b), html_b = render_html(b);
  EXPECT_EQ(text_b.find("Diagnoses"), std::string::npos) << text_b;
  EXPECT_EQ(text_b.find("Stragglers"), std::string::npos) << text_b;
  EXPECT_EQ(html_b.find("<h2>Diagnoses"), std::string::npos);
  EXPECT_EQ(html_b.find("<h2>Stragglers"), std::string::npos);
  EXPECT_NE(html_b.find("<h2>Per (op, size)"), std::string::npos);
}

TEST(ReportTerms, AbPageNamesTheTransportsNotThisRunAndBaseline) {
  ProfileSet run, base;
  run.colls.push_back(sample(0, 20, 100));
  run.net_plugins.push_back("railscope");
  base.colls.push_back(sample(0, 10, 200));
  base.nets.push_back("IB");
  base.net_plugins.push_back("railscope");  // NCCL_NET=IB picks NCCL's own IB transport all the same
  const Report r = analyse(run, &base);
  EXPECT_EQ(r.run_label, "railscope");
  EXPECT_EQ(r.baseline_label, "built-in IB");
  const std::string html = render_html(r), text = render_text(r);
  EXPECT_EQ(html.find("this run"), std::string::npos);
  EXPECT_EQ(html.find("baseline (p50)"), std::string::npos);
  EXPECT_NE(html.find("railscope (busbw p50)"), std::string::npos);
  EXPECT_NE(html.find("built-in IB (busbw p50)"), std::string::npos);
  EXPECT_NE(html.find("ratio railscope / built-in IB"), std::string::npos);
  EXPECT_NE(text.find("built-in IB"), std::string::npos) << text;
  // Tags win; without any, the folder's name; two alike are told apart.
  ProfileSet tagged;
  tagged.tags = {"tcp", "tcp"};
  EXPECT_EQ(set_label(tagged, "run"), "tcp");
  ProfileSet bare;
  bare.paths = {"/jobs/42/prof-verbs/"};
  EXPECT_EQ(set_label(bare, "run"), "prof-verbs");
  const Report same = analyse(tagged, &tagged);
  EXPECT_EQ(same.baseline_label, "tcp (baseline)");
}

double attr(const std::string& svg, const std::string& element_re, const char* name) {
  std::smatch m;
  const std::regex re(element_re + "[^>]*" + name + "=\"([-0-9.]+)\"");
  if (!std::regex_search(svg, m, re)) return -1e9;
  return std::stod(m[1]);
}

TEST(ReportPlot, OneSizeIsCentredWithItsValueAndTheLegendIsBelowThePlot) {
  Series s;
  s.name = "busbw p50";
  s.css_class = "run";
  s.points = {{4194304.0, 73.4}};
  const std::string svg = svg_loglog_plot("AllReduce (n = 8)", {s});
  const double frame_x = attr(svg, "<rect", "x"), frame_w = attr(svg, "<rect", "width");
  const double frame_y = attr(svg, "<rect", "y"), frame_h = attr(svg, "<rect", "height");
  const double cx = attr(svg, "<circle", "cx");
  EXPECT_NEAR(cx, frame_x + frame_w / 2, 1.0) << svg;
  EXPECT_NE(svg.find("73.4 GB/s"), std::string::npos) << "a lone point says its value";
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, std::regex("y=\"([0-9.]+)\" class=\"legend run\"")));
  EXPECT_GT(std::stod(m[1]), frame_y + frame_h + 20) << "below the x axis, not over the curves";
  // A title too long for the picture is fitted to it rather than clipped.
  const std::string long_title(120, 'x');
  EXPECT_NE(svg_loglog_plot(long_title, {s}).find("textLength=\"624\""), std::string::npos);
  EXPECT_EQ(svg.find("textLength"), std::string::npos);
}

// The p1–p99 band: one closed path per series, under its line (drawn before it), spanning from the p99
// edge above the line down to the p1 edge below it, in both y scales; named in the legend.
TEST(ReportPlot, TheP1ToP99BandSurroundsTheP50Line) {
  Series s;
  s.name = "busbw p50";
  s.css_class = "run";
  s.points = {{1 << 20, 40}, {1 << 22, 80}};
  s.band = {{1 << 20, 10, 50}, {1 << 22, 60, 90}};
  s.band_name = "busbw p1–p99";
  for (const YScale scale : {YScale::Linear, YScale::Log}) {
    const std::string svg = svg_busbw_plot("AllReduce", {s}, scale);
    const std::string band_start = "<path class=\"band run\" d=\"";
    const size_t band = svg.find(band_start), line = svg.find("<path class=\"series run\"");
    ASSERT_NE(band, std::string::npos) << svg;
    EXPECT_LT(band, line) << "the band under the line";
    EXPECT_NE(svg.find("class=\"legend run\">busbw p1–p99</text>"), std::string::npos) << svg;
    // The band's corners: x of each size, y of p99 (left to right) then p1 (back); the line's points lie
    // between them at the same x.
    std::vector<std::pair<double, double>> corners;
    const size_t from = band + band_start.size();
    const std::string d = svg.substr(from, svg.find('"', from) - from);
    const std::regex pt("[ML]([0-9.]+) ([0-9.]+)");
    for (std::sregex_iterator it(d.begin(), d.end(), pt), end; it != end; ++it)
      corners.emplace_back(std::stod((*it)[1]), std::stod((*it)[2]));
    ASSERT_EQ(corners.size(), 4u) << d;
    EXPECT_EQ(d.back(), 'Z') << d;
    std::vector<std::pair<double, double>> points;
    const std::regex circle("<circle class=\"point run\" cx=\"([0-9.]+)\" cy=\"([0-9.]+)\"");
    for (std::sregex_iterator it(svg.begin(), svg.end(), circle), end; it != end; ++it)
      points.emplace_back(std::stod((*it)[1]), std::stod((*it)[2]));
    ASSERT_EQ(points.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      const auto& top = corners[i];
      const auto& bottom = corners[3 - i];
      EXPECT_DOUBLE_EQ(top.first, points[i].first);
      EXPECT_DOUBLE_EQ(bottom.first, points[i].first);
      EXPECT_LT(top.second, points[i].second) << "p99 above p50 (smaller y)";
      EXPECT_GT(bottom.second, points[i].second) << "p1 below p50";
    }
    // The axis takes in the top of the band: 90 GB/s is inside the frame.
    EXPECT_GE(corners[1].second, attr(svg, "<rect", "y")) << svg;
  }
}

TEST(ReportFabric, PerPortTotalsAndTheTimeLine) {
  const std::string dir = "/tmp/railscope-report-fabric-unit";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/n1.jsonl")
      << "{\"type\":\"header\",\"schema\":\"railscope.profile\",\"version\":1,\"hostname\":\"n1\"}\n"
      << "{\"type\":\"coll\",\"rank\":0,\"nranks\":2,\"op\":\"AllReduce\",\"bytes\":1048576,\"count\":262144,"
         "\"dtype\":\"ncclFloat32\",\"time_us\":100,\"busbw_gbs\":10.5,\"start_unix_ns\":1000000000}\n"
      << "{\"type\":\"fabric\",\"start_unix_ns\":1000000000,\"end_unix_ns\":2000000000,\"ports\":["
         "{\"port\":\"mlx5_0:1\",\"state\":\"ACTIVE\",\"loss\":0,\"congestion\":0,\"pause\":0,\"link\":0,"
         "\"discard\":0,\"traffic\":10,\"other\":0},"
         "{\"port\":\"mlx5_1:1\",\"state\":\"ACTIVE\",\"loss\":400,\"congestion\":50,\"pause\":0,\"link\":0,"
         "\"discard\":0,\"traffic\":20,\"other\":0}]}\n"
      << "{\"type\":\"fabric\",\"start_unix_ns\":2000000000,\"end_unix_ns\":3000000000,\"ports\":["
         "{\"port\":\"mlx5_0:1\",\"state\":\"ACTIVE\",\"loss\":0,\"traffic\":5},"
         "{\"port\":\"mlx5_1:1\",\"state\":\"DOWN\",\"loss\":7}]}\n";
  const Report r = analyse(read_profiles({dir}), nullptr);
  ASSERT_EQ(r.fabric_ports.size(), 2u);
  EXPECT_EQ(r.fabric_ports[1].port, "mlx5_1:1");
  EXPECT_EQ(r.fabric_ports[1].host, "n1");
  EXPECT_EQ(r.fabric_ports[1].windows, 2u);
  EXPECT_EQ(r.fabric_ports[1].not_active, 1u);
  EXPECT_EQ(r.fabric_ports[1].counts[0], 407u);
  EXPECT_EQ(r.fabric_ports[1].counts[1], 50u);
  EXPECT_EQ(r.fabric_ports[0].counts[5], 15u);
  const std::string text = render_text(r);
  EXPECT_NE(text.find("mlx5_1:1"), std::string::npos) << text;
  const std::string html = render_html(r);
  EXPECT_NE(html.find("<svg class=\"timeline\""), std::string::npos);
  std::ptrdiff_t trouble = 0, clean = 0;
  const std::regex window_re("class=\"window (trouble|clean)\"");
  for (std::sregex_iterator it(html.begin(), html.end(), window_re), end; it != end; ++it)
    ((*it)[1] == "trouble" ? trouble : clean)++;
  EXPECT_EQ(trouble, 2) << "both windows had loss on mlx5_1:1";
  EXPECT_EQ(clean, 0);
  EXPECT_NE(html.find("<circle class=\"busbw\""), std::string::npos) << "busbw on the same time line";
  EXPECT_NE(html.find("n1 mlx5_1:1 ACTIVE: loss 400, congestion 50"), std::string::npos);
  const auto j = nlohmann::json::parse(render_json(r));
  EXPECT_EQ(j.at("fabric_ports").at(1).at("loss"), 407);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace railscope::report
