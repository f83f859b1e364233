// SPDX-License-Identifier: Apache-2.0
// The preflight HTML page (tools/preflight/html_page.h) from a synthetic verdict: self-contained, escaped,
// one heat map per rail with a cell per measured link, the outlier outlined, the findings listed; and
// loaded in headless Chromium (as `railscope report`'s page in tests/abi/profiler/report_roundtrip_test.cpp):
// no script error, every heat map drawn with the right number of cells.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "html_page.h"

namespace railscope::preflight {
namespace {

NodeReport node(int rank, const std::string& host) {
  NodeReport r;
  r.rank = rank;
  r.host = host;
  for (int i = 0; i < 2; ++i) {
    NicSummary n;
    n.device = fmt::format("mlx5_{}", i);
    n.state = "ACTIVE";
    n.link_layer = "Ethernet";
    n.active_mtu = 4096;
    n.speed_mbps = 400000;
    n.gid_type = "RoCE v2";
    n.gid_family = "AF_INET";
    n.subnet = fmt::format("10.{}.0.0/16", i);
    n.ipv4 = fmt::format("10.{}.0.{}", i, rank + 1);
    r.nics.push_back(n);
  }
  return r;
}

// 5 nodes (one with a hostile name), 2 rails; rail 0: the ring both ways (10 links); rail 1: every
// ordered pair (20 links), node03 → node01 at a third of the others, node04 → node00 failed.
Verdict synthetic() {
  std::vector<NodeReport> nodes;
  for (int i = 0; i < 5; ++i)
    nodes.push_back(node(i, i == 2 ? "node<02>&\"x\"" : fmt::format("node{:02}", i)));
  Verdict v = decide(5, "slurm", nodes, {}, {}, 60);
  std::vector<LinkMeasurement> links;
  const auto add = [&](int rail, size_t a, size_t b, double GBps) {
    LinkMeasurement m;
    m.rail = rail;
    m.src_node = v.nodes[a].host;
    m.dst_node = v.nodes[b].host;
    m.src_nic = m.dst_nic = fmt::format("mlx5_{}:1", rail);
    m.GBps = GBps;
    m.line_GBps = 50;
    m.lat_us = 3;
    links.push_back(m);
  };
  for (size_t i = 0; i < 5; ++i) add(0, i, (i + 1) % 5, 47), add(0, (i + 1) % 5, i, 46.5);
  for (size_t a = 0; a < 5; ++a)
    for (size_t b = 0; b < 5; ++b)
      if (a != b) add(1, a, b, a == 3 && b == 1 ? 15.5 : 46.9);
  links.back().error = "node04: netbench client on mlx5_1: exit status 1";  // node04 -> node03
  add_links(&v, std::move(links), {});
  return v;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// The text of the heat map of `rail` in a page (from its <svg> to its </svg>).
std::string heat_map_of(const std::string& page, int rail) {
  const size_t at = page.find(fmt::format("class=\"rail-heatmap\" data-rail=\"{}\"", rail));
  if (at == std::string::npos) return {};
  return page.substr(at, page.find("</svg>", at) - at);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(PreflightHtml, OneHeatMapPerRailWithACellPerLinkAndTheOutlierMarked) {
  const Verdict v = synthetic();
  ASSERT_EQ(v.exit_code, 2);
  const std::string page = render_html(v);
  // Self-contained: no address but the SVG namespace, no external script or style sheet.
  EXPECT_EQ(count(page, "http"), count(page, "http://www.w3.org/2000/svg"));
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  // Escaped: the hostile host name is text, never markup.
  EXPECT_EQ(page.find("node<02>"), std::string::npos);
  EXPECT_NE(page.find("node&lt;02&gt;&amp;&quot;x&quot;"), std::string::npos);

  EXPECT_EQ(count(page, "class=\"rail-heatmap\""), 2u);
  const std::string r0 = heat_map_of(page, 0), r1 = heat_map_of(page, 1);
  EXPECT_EQ(count(r0, "<rect class=\"cell"), 10u);
  EXPECT_EQ(count(r1, "<rect class=\"cell"), 20u);
  EXPECT_NE(r0.find("colour: % of line rate"), std::string::npos);
  // Rail 0 is healthy (94 % of line rate: the best bin); rail 1 has one outlier and one failed link.
  EXPECT_EQ(count(r0, "fill=\"#1a9850\""), 10u + 1u);  // + the legend's swatch
  EXPECT_EQ(count(r0, "cell slow"), 0u);
  EXPECT_EQ(count(r1, "<rect class=\"cell slow\""), 1u);
  EXPECT_EQ(count(r1, "<rect class=\"cell failed\""), 1u);
  // The outlier: row node03 (y of the 4th row), column node01; red (31 % of line rate).
  const std::regex slow_cell(
      "<rect class=\"cell slow\" x=\"([0-9.]+)\" y=\"([0-9.]+)\" width=\"([0-9.]+)\"[^>]*fill=\"#d73027\">"
      "<title>node03/mlx5_1:1 → node01/mlx5_1:1: 15.5 GB/s, 31 % of line rate");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r1, m, slow_cell)) << r1.substr(0, 2000);
  const double cell = std::stod(m[3]) + 1;  // + the gap
  const std::regex first_cell("<rect class=\"unmeasured\" x=\"([0-9.]+)\" y=\"([0-9.]+)\"");
  std::smatch f;
  ASSERT_TRUE(std::regex_search(r1, f, first_cell));
  EXPECT_DOUBLE_EQ(std::stod(m[1]) - std::stod(f[1]), 1 * cell);  // column 1
  EXPECT_DOUBLE_EQ(std::stod(m[2]) - std::stod(f[2]), 3 * cell);  // row 3

  // The findings listed: the slow and the failed link.
  EXPECT_EQ(count(page, "<tr class=\"finding\">"), v.findings.size());
  EXPECT_NE(
      page.find("<td class=\"l\">link.slow</td><td class=\"l\">node03/mlx5_1:1 → node01/mlx5_1:1: 15.5 GB/s"),
      std::string::npos);
  EXPECT_NE(page.find("<td class=\"l\">link.failed</td>"), std::string::npos);
}

TEST(PreflightHtml, ColourBasisIsTheRailMedianWithoutALineRate) {
  Verdict v = synthetic();
  for (auto& l : v.links) l.line_GBps = 0;
  std::vector<LinkMeasurement> links = v.links;
  Verdict w = decide(5, "slurm", v.nodes, {}, {}, 60);
  add_links(&w, std::move(links), {});
  EXPECT_EQ(heat_basis(w, 1), "rail median");
  const std::string r1 = heat_map_of(render_html(w), 1);
  EXPECT_NE(r1.find("colour: % of rail median"), std::string::npos);
  EXPECT_NE(r1.find("15.5 GB/s, 33 % of the rail&#39;s median"), std::string::npos) << r1.substr(0, 3000);
  // Two nodes, one link each way, no line rate: nothing to compare with, grey cells.
  Verdict two = decide(2, "torchrun", {node(0, "a"), node(1, "b")}, {}, {}, 60);
  LinkMeasurement m;
  m.src_node = "a", m.dst_node = "b", m.GBps = 3;
  add_links(&two, {m}, {});
  EXPECT_EQ(heat_basis(two, 0), "");
  EXPECT_EQ(count(render_html(two), "fill=\"#b0b0b0\""), 1u);
}

TEST(PreflightHtml, PageLoadsInHeadlessChromiumWithEveryHeatMapDrawn) {
  ASSERT_EQ(std::system("command -v chromium > /dev/null"), 0)
      << "chromium missing: run scripts/install-deps.sh";
  const std::string dir = "/tmp/railscope-preflight-html-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string html = dir + "/preflight.html";
  std::ofstream(html) << render_html(synthetic());
  const std::string dom = dir + "/dom.html", log = dir + "/chromium.log";
  const std::string cmd =
      "timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" + dir +
      "/profile --enable-logging=stderr --v=0 --dump-dom file://" + html + " > " + dom + " 2> " + log;
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << slurp(log);
  const std::string d = slurp(dom);
  EXPECT_EQ(slurp(log).find(":CONSOLE"), std::string::npos) << "console output:\n" << slurp(log);
  EXPECT_NE(d.find("data-js-errors=\"0\""), std::string::npos) << d.substr(0, 400);
  EXPECT_NE(d.find("data-heatmaps-drawn=\"2\""), std::string::npos) << d.substr(0, 400);
  EXPECT_NE(d.find("data-cells-drawn=\"30\""), std::string::npos) << d.substr(0, 400);
  // Each map drawn with its own number of cells (the browser's count, with a size each).
  const std::string r0 = heat_map_of(d, 0), r1 = heat_map_of(d, 1);
  EXPECT_NE(r0.find("data-cells-drawn=\"10\""), std::string::npos) << r0.substr(0, 300);
  EXPECT_NE(r1.find("data-cells-drawn=\"20\""), std::string::npos) << r1.substr(0, 300);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace railscope::preflight
