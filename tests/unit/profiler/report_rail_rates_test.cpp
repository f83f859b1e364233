// SPDX-License-Identifier: Apache-2.0
// `railscope report` on the net plugin's stats lines of several nodes (RAILSCOPE_NET_STATS,
// "rail_rate"): the per-port rail-rate table and the rail slower on one node than on the others
// (tools/report/rail_rates.h), from synthetic files.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tools/report/analysis.h"
#include "tools/report/render.h"

namespace railscope::report {
namespace {

namespace fs = std::filesystem;

// A verbs stats line of `role` from `host`/`pid` on connection `peer` with one rail_rate entry per
// (port, MB/s): 1 MiB sends, busy `busy_s` seconds each.
std::string line(const std::string& host, int pid, const std::string& role, const std::string& peer,
                 const std::vector<std::pair<std::string, double>>& ports, double busy_s) {
  std::string rates;
  for (const auto& [port, mbps] : ports) {
    const auto bytes = static_cast<uint64_t>(mbps * 1e6 * busy_s);
    rates += fmt::format("{}{{\"port\":\"{}\",\"GBps\":{},\"bytes\":{},\"busy_s\":{},\"transfers\":{}}}",
                         rates.empty() ? "" : ",", port, mbps / 1e3, bytes, busy_s, bytes >> 20);
  }
  return fmt::format(
      "{{\"engine\":\"verbs\",\"role\":\"{}\",\"final\":false,\"pid\":{},\"local\":{{\"host\":\"{}\",\"dev\":"
      "\"mlx5_0\",\"gid\":\"::\"}},\"peer\":{{\"host\":\"x\",\"dev\":\"mlx5_0\",\"gid\":\"::\",\"addr\":\"{}"
      "\"}},"
      "\"qps\":1,\"bytes\":1,\"rail_rate\":[{}]}}",
      role, pid, host, peer, rates);
}

class RailRatesReport : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("railscope-report-rails-" + std::to_string(::getpid()) + "-" +
                                        testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::vector<std::string>& lines) {
    std::ofstream out(dir_ / name);
    for (const auto& l : lines) out << l << "\n";
  }
  fs::path dir_;
};

TEST_F(RailRatesReport, TableAndTheRailSlowOnOneNode) {
  // Three nodes, two rails each (one process per rail); n2's mlx5_1:1 runs at a fifth of its pace.
  for (const std::string host : {"n0", "n1", "n2"}) {
    const double slow = host == "n2" ? 2000 : 10000;
    write("railscope-net-" + host + ".jsonl",
          {line(host, 10, "send", "10.0.0.1:1", {{"mlx5_0:1", 10000}}, 2),
           line(host, 11, "send", "10.0.0.1:2", {{"mlx5_1:1", slow}}, 2),
           // The next period of the same connections.
           line(host, 10, "send", "10.0.0.1:1", {{"mlx5_0:1", 10000}}, 2),
           line(host, 11, "send", "10.0.0.1:2", {{"mlx5_1:1", slow}}, 2),
           // A receiving connection of the same process: the same port's figures, not counted twice.
           line(host, 10, "recv", "10.0.0.1:3", {{"mlx5_0:1", 10000}}, 2)});
  }
  const ProfileSet set = read_profiles({dir_.string()});
  EXPECT_TRUE(set.problems.empty());
  const Report r = analyse(set, nullptr);
  EXPECT_EQ(r.hosts, 3u);
  ASSERT_EQ(r.rail_rates.size(), 6u);
  // Sorted by port, then host.
  EXPECT_EQ(r.rail_rates[0].port, "mlx5_0:1");
  EXPECT_EQ(r.rail_rates[0].host, "n0");
  EXPECT_EQ(r.rail_rates[5].port, "mlx5_1:1");
  EXPECT_EQ(r.rail_rates[5].host, "n2");
  EXPECT_NEAR(r.rail_rates[0].mb_per_s(), 10000, 1);
  EXPECT_NEAR(r.rail_rates[0].busy_s, 4.0, 1e-9);  // two lines of the send connection, not the recv's
  EXPECT_NEAR(r.rail_rates[5].mb_per_s(), 2000, 1);
  EXPECT_EQ(r.rail_rates[5].processes, 1u);
  ASSERT_EQ(r.diags.size(), 1u);
  EXPECT_EQ(r.diags[0].id, "fabric.rail_skew");
  EXPECT_EQ(r.diags[0].host, "n2");
  EXPECT_EQ(r.diags[0].detail.rfind("mlx5_1:1 on n2: ", 0), 0u) << r.diags[0].detail;
  EXPECT_NE(r.diags[0].detail.find("(0.20x)"), std::string::npos) << r.diags[0].detail;
  EXPECT_NE(r.diags[0].detail.find("n0 10000.0 MB/s"), std::string::npos) << r.diags[0].detail;
  EXPECT_NE(r.diags[0].fix.find("railscope doctor"), std::string::npos);

  const std::string text = render_text(r);
  EXPECT_NE(text.find("Rail rates"), std::string::npos) << text;
  EXPECT_NE(text.find(fmt::format("{:<16} {:<12} {:>10}", "n2", "mlx5_1:1", "2000.000")), std::string::npos)
      << text;
  EXPECT_NE(text.find("[fabric.rail_skew]"), std::string::npos) << text;
  const std::string html = render_html(r);
  EXPECT_NE(html.find("<h2>Rail rates</h2>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"l\">n2</td><td class=\"l\">mlx5_1:1</td><td>2000.000</td>"),
            std::string::npos);
  const auto j = nlohmann::json::parse(render_json(r));
  ASSERT_EQ(j.at("rail_rates").size(), 6u);
  EXPECT_EQ(j.at("rail_rates").at(5).at("host"), "n2");
  EXPECT_EQ(j.at("rail_rates").at(5).at("sends"), r.rail_rates[5].sends);
}

TEST_F(RailRatesReport, HealthyNodesAndTooLittleTrafficSayNothing) {
  write("a.jsonl", {line("n0", 1, "send", "p", {{"mlx5_0:1", 10000}}, 2),
                    line("n1", 2, "send", "p", {{"mlx5_0:1", 8000}}, 2),
                    line("n2", 3, "send", "p", {{"mlx5_0:1", 9000}}, 2),
                    // Slow, but 15 sends only (16 MB in 1 MiB sends): not judged.
                    line("n3", 4, "send", "p", {{"mlx5_0:1", 1}}, 16)});
  const Report r = analyse(read_profiles({(dir_ / "a.jsonl").string()}), nullptr);
  EXPECT_EQ(r.rail_rates.size(), 4u);
  EXPECT_EQ(r.rail_rates[3].sends, 15u);
  EXPECT_TRUE(r.diags.empty()) << r.diags[0].detail;
}

TEST_F(RailRatesReport, ProcessesOfOneNodeOnOnePortAreAdded) {
  write("a.jsonl", {line("n0", 1, "send", "p", {{"mlx5_0:1", 3000}}, 2),
                    line("n0", 2, "send", "q", {{"mlx5_0:1", 3000}}, 1)});
  const Report r = analyse(read_profiles({(dir_ / "a.jsonl").string()}), nullptr);
  ASSERT_EQ(r.rail_rates.size(), 1u);
  EXPECT_EQ(r.rail_rates[0].processes, 2u);
  EXPECT_NEAR(r.rail_rates[0].busy_s, 2.0, 1e-9);  // the largest: their sends overlap on the link
  EXPECT_NEAR(r.rail_rates[0].mb_per_s(), 4500, 1);
}

TEST_F(RailRatesReport, OutOfRangeNumbersSkipTheLineWithItsNumber) {
  const std::string good = line("n0", 1, "send", "p", {{"mlx5_0:1", 3000}}, 2);
  std::string negative = good;
  negative.replace(negative.find("\"busy_s\":2"), 10, "\"busy_s\":-2");
  std::string huge = good;
  huge.replace(huge.rfind("\"bytes\":"), 8, "\"bytes\":1e30,\"x\":");  // the rail_rate entry's
  write("a.jsonl", {good, negative, "{not json", huge,
                    R"({"engine":"verbs","rail_rate":[{"port":7,"bytes":1},"x",{"port":"mlx5_1:1"}]})"});
  const ProfileSet set = read_profiles({dir_.string()});
  ASSERT_EQ(set.problems.size(), 3u) << testing::PrintToString(set.problems);
  EXPECT_NE(set.problems[0].find("a.jsonl:2: busy_s = -2"), std::string::npos) << set.problems[0];
  EXPECT_NE(set.problems[1].find("a.jsonl:3: not a JSON object"), std::string::npos) << set.problems[1];
  EXPECT_NE(set.problems[2].find("a.jsonl:4: bytes = 1e+30"), std::string::npos) << set.problems[2];
  // Line 5: entries without a port name or not objects are left out; one with no figures is kept but
  // moves nothing (no row).
  ASSERT_EQ(set.rail_rates.size(), 2u);
  const Report r = analyse(set, nullptr);
  ASSERT_EQ(r.rail_rates.size(), 1u);
  EXPECT_EQ(r.rail_rates[0].host, "n0");
}

}  // namespace
}  // namespace railscope::report
