// SPDX-License-Identifier: Apache-2.0
// Files written by the real plugin in several processes (one per rank, as on a cluster), read back
// by `railscope report`: the straggler table names the rank that was delayed, the wait matrix the
// peer everyone waits on, a corrupt line is reported and skipped, and the HTML page loads in
// headless Chromium with no console error and its plots drawn. The page is written whole and renamed
// into place, so a symbolic link planted at its name is replaced, never written through.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "abi/profiler/profile_json.h"

namespace railscope::abi_test {
namespace {

constexpr int kRanks = 4;
constexpr int kDelayedRank = 2;
constexpr int kColls = 20;

int run(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// Child process = one rank. Collective k starts at t0 + k·100 ms; the delayed rank 40 ms later (wide
// margins: on a loaded 2-core machine four ranks woke up more than 20 ms late often enough that another
// rank arrived last in half the collectives, which failed this test once).
[[noreturn]] void rank_main(int rank, std::chrono::system_clock::time_point t0) {
  ProfilerDriver drv(5);
  if (!drv.loaded() || drv.init(0x5ca1ab1e, rank, kRanks, kRanks) != ncclSuccess) _exit(3);
  for (int k = 0; k < kColls; ++k) {
    auto at = t0 + std::chrono::milliseconds(100 * k);
    if (rank == kDelayedRank) at += std::chrono::milliseconds(40);
    std::this_thread::sleep_until(at);
    CollSpec s;
    s.seq = static_cast<uint64_t>(k);
    s.count = 1 << 20;
    s.channels = 1;
    // The rank after the delayed one waits for its data.
    const int send_peer = (rank + 1) % kRanks, recv_peer = (rank + kRanks - 1) % kRanks;
    drv.run_ring_coll(s, 500'000, send_peer, recv_peer, recv_peer == kDelayedRank ? 3000 : 0);
  }
  _exit(drv.finalize() == ncclSuccess ? 0 : 4);
}

std::string make_multi_rank_profiles() {
  const std::string dir = fresh_profile_dir("ranks");
  const auto t0 = std::chrono::system_clock::now() + std::chrono::milliseconds(1000);
  std::vector<pid_t> kids;
  for (int r = 0; r < kRanks; ++r) {
    const pid_t pid = fork();
    if (pid == 0) rank_main(r, t0);
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank process failed";
  }
  return dir;
}

TEST(Report, MergesRanksAndNamesTheStraggler) {
  const std::string dir = make_multi_rank_profiles();
  const std::vector<std::string> lines = read_profile_lines(dir);
  std::string not_colls;
  for (const std::string& l : lines)
    if (l.find("\"type\":\"coll\"") == std::string::npos) not_colls += l + "\n";
  ASSERT_EQ(lines.size(), static_cast<size_t>(kRanks * (kColls + 3)))  // + header, comm, summary
      << "the lines that are not collective records:\n"
      << not_colls;
  // A damaged line must be reported and skipped, not abort the report.
  {
    std::ofstream(dir + "/damaged.jsonl")
        << "{\"type\":\"header\",\"schema\":\"railscope.profile\",\"version\":1}\n{not json\n";
  }
  const std::string out = dir + "/report.json";
  ASSERT_EQ(
      run(std::string(RAILSCOPE_CLI) + " report --json " + dir + " > " + out + " 2> " + dir + "/err.txt"), 0)
      << slurp(dir + "/err.txt");
  const auto j = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(j.at("files"), kRanks + 1);
  EXPECT_EQ(j.at("records"), kRanks * kColls);
  ASSERT_EQ(j.at("problems").size(), 1u);
  EXPECT_NE(j.at("problems")[0].get<std::string>().find("damaged.jsonl:2"), std::string::npos);
  ASSERT_EQ(j.at("sizes").size(), 1u);
  EXPECT_EQ(j.at("sizes")[0].at("ranks"), kRanks);
  EXPECT_EQ(j.at("sizes")[0].at("records"), kRanks * kColls);
  EXPECT_EQ(j.at("sizes")[0].at("op"), "AllReduce");
  const auto& st = j.at("stragglers");
  ASSERT_EQ(st.size(), static_cast<size_t>(kRanks));
  EXPECT_EQ(st[0].at("rank"), kDelayedRank) << j.dump(2);
  EXPECT_GE(st[0].at("times_last").get<int>(), kColls / 2);
  EXPECT_GT(st[0].at("mean_late_us").get<double>(), 10000.0);
  EXPECT_NE(j.at("straggler_summary").get<std::string>().find("rank 2 arrived last"), std::string::npos);
  EXPECT_NE(j.at("wait_summary").get<std::string>().find("peer 2 is waited on most"), std::string::npos)
      << j.at("wait_summary");
  // The text table says the same.
  ASSERT_EQ(run(std::string(RAILSCOPE_CLI) + " report " + dir + " > " + dir + "/report.txt 2>&1"), 0);
  const std::string text = slurp(dir + "/report.txt");
  EXPECT_NE(text.find("rank 2 arrived last"), std::string::npos) << text;
  EXPECT_NE(text.find("damaged.jsonl:2: not a JSON object"), std::string::npos) << text;
}

TEST(Report, MissingDirectoryIsAClearError) {
  const std::string err = "/tmp/railscope-report-missing.err";
  EXPECT_EQ(run(std::string(RAILSCOPE_CLI) + " report /nonexistent/railscope 2> " + err), 2);
  EXPECT_NE(slurp(err).find("/nonexistent/railscope: no such file or directory"), std::string::npos);
}

// A file whose every record holds a number out of range was "no records" with no reason
// (after undefined behaviour converting it); now each line is named, then the few-then-count rule.
TEST(Report, OutOfRangeNumbersAreNamedPerLineNotASilentNoRecords) {
  const std::string dir = "/tmp/railscope-report-range";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir + "/r.jsonl");
    f << "{\"type\":\"header\",\"schema\":\"railscope.profile\",\"version\":1}\n";
    for (int i = 0; i < 8; ++i) f << "{\"type\":\"coll\",\"start_unix_ns\":1e30}\n";
  }
  const std::string err = dir + "/err.txt";
  EXPECT_EQ(run(std::string(RAILSCOPE_CLI) + " report " + dir + " > /dev/null 2> " + err), 2);
  const std::string text = slurp(err);
  EXPECT_NE(text.find("r.jsonl:2: start_unix_ns = 1e+30 is not an integer"), std::string::npos) << text;
  EXPECT_NE(text.find("r.jsonl:6: start_unix_ns"), std::string::npos) << text;
  EXPECT_EQ(text.find("r.jsonl:7:"), std::string::npos) << text;
  EXPECT_NE(text.find("8 lines skipped in all (3 more than listed above)"), std::string::npos) << text;
  EXPECT_NE(text.find("no collective or diagnosis record that could be read"), std::string::npos) << text;
  std::filesystem::remove_all(dir);
}

TEST(Report, HtmlPageLoadsInHeadlessChromiumWithPlotsDrawn) {
  ASSERT_EQ(run("command -v chromium > /dev/null"), 0) << "chromium missing: run scripts/install-deps.sh";
  // Two runs: this one and a baseline 20 % faster, over several sizes so the lines have points. As an A/B
  // of transports: railscope's net plugin, then NCCL's built-in IB (NCCL_NET=IB), which the page names.
  std::string dirs[2];
  for (int run_index = 0; run_index < 2; ++run_index) {
    dirs[run_index] = fresh_profile_dir(run_index == 0 ? "html-run" : "html-base");
    setenv("NCCL_NET_PLUGIN", "railscope", 1);
    if (run_index == 1) setenv("NCCL_NET", "IB", 1);
    ProfilerDriver drv(5);
    ASSERT_TRUE(drv.loaded()) << drv.load_error();
    ASSERT_EQ(drv.init(0x600d, 0, 8, 2), ncclSuccess);
    // Three samples per size, 0 %, 10 % and 20 % slower: the p1–p99 band has a height.
    uint64_t seq = 0;
    for (uint64_t count = 1 << 10; count <= (1u << 24); count <<= 2)
      for (uint64_t slower = 10; slower <= 12; ++slower, ++seq) {
        CollSpec s;
        s.count = count;
        s.seq = seq;
        const uint64_t duration = (2000 + count / (run_index == 0 ? 10 : 12)) * slower / 10;
        drv.run_coll(s, duration);
        s.func = "AllGather";
        drv.run_coll(s, duration);
      }
    ASSERT_EQ(drv.finalize(), ncclSuccess);
    unsetenv("NCCL_NET_PLUGIN");
    unsetenv("NCCL_NET");
  }
  // Two fabric windows of the run, the second with packet loss on one port (docs/profile-format.md).
  for (const auto& e : std::filesystem::directory_iterator(dirs[0]))
    if (e.path().extension() == ".jsonl")
      std::ofstream(e.path(), std::ios::app)
          << "{\"type\":\"fabric\",\"start_unix_ns\":1,\"end_unix_ns\":2,\"ports\":[{\"port\":\"mlx5_0:1\","
             "\"state\":\"ACTIVE\",\"loss\":0,\"traffic\":9}]}\n"
          << "{\"type\":\"fabric\",\"start_unix_ns\":2,\"end_unix_ns\":3,\"ports\":[{\"port\":\"mlx5_0:1\","
             "\"state\":\"ACTIVE\",\"loss\":412,\"traffic\":9}]}\n";
  const std::string html = dirs[0] + "/report.html";
  ASSERT_EQ(run(std::string(RAILSCOPE_CLI) + " report " + dirs[0] + " --baseline " + dirs[1] + " --html " +
                html + " > /dev/null"),
            0);
  const std::string page = slurp(html);
  EXPECT_EQ(page.find("http://"), page.find("http://www.w3.org/2000/svg"))
      << "self-contained: no external links";
  const std::string dom = dirs[0] + "/dom.html", log = dirs[0] + "/chromium.log";
  const std::string cmd =
      "timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run "
      "--user-data-dir=" +
      dirs[0] +
      "/chromium-profile --enable-logging=stderr --v=0 "
      "--dump-dom file://" +
      html + " > " + dom + " 2> " + log;
  ASSERT_EQ(run(cmd), 0) << slurp(log);
  const std::string d = slurp(dom);
  const std::string console_log = slurp(log);
  EXPECT_EQ(console_log.find(":CONSOLE"), std::string::npos) << "console output:\n" << console_log;
  EXPECT_NE(d.find("data-js-errors=\"0\""), std::string::npos);
  // Two ops × (run + baseline) series × (linear, log10 y axis), drawn as paths with points; the wait
  // matrix heatmap.
  EXPECT_NE(d.find("data-plots-drawn=\"8\""), std::string::npos) << d.substr(0, 400);
  // Each of those lines inside its p1–p99 band, drawn with an area, as the browser lays them out.
  EXPECT_NE(d.find("data-bands-drawn=\"8\""), std::string::npos) << d.substr(0, 600);
  EXPECT_NE(d.find("data-bands-around-line=\"8\""), std::string::npos) << d.substr(0, 600);
  EXPECT_NE(d.find("railscope (busbw p1–p99)"), std::string::npos);
  EXPECT_NE(d.find("AllReduce (n = 8), log scale"), std::string::npos);
  EXPECT_NE(d.find(">busbw GB/s</text>"), std::string::npos) << "a linear y axis";
  EXPECT_NE(d.find(">busbw GB/s (log10)</text>"), std::string::npos);
  // nccl-tests' closing line, per op of the run.
  EXPECT_NE(d.find("# AllReduce (n = 8): Avg bus bandwidth : "), std::string::npos);
  EXPECT_NE(d.find("# AllGather (n = 8): Avg bus bandwidth : "), std::string::npos);
  EXPECT_NE(d.find("class=\"series run\" d=\"M"), std::string::npos);
  EXPECT_NE(d.find("class=\"series baseline\" d=\"M"), std::string::npos);
  EXPECT_NE(d.find("AllReduce (n = 8)"), std::string::npos);
  EXPECT_NE(d.find("AllGather (n = 8)"), std::string::npos);
  EXPECT_NE(d.find("<svg class=\"heatmap\""), std::string::npos);
  // As the browser lays them out, no title runs past its picture and no legend sits on a plot;
  // the A/B sides are named by transport. The fabric windows on the time line, and the port table.
  EXPECT_NE(d.find("data-titles-clipped=\"0\""), std::string::npos) << d.substr(0, 600);
  EXPECT_NE(d.find("data-legends-over-plot=\"0\""), std::string::npos) << d.substr(0, 600);
  // Four legend entries a plot (two lines, two bands): none past the picture's edge or into the next.
  EXPECT_NE(d.find("data-legends-clipped=\"0\""), std::string::npos) << d.substr(0, 600);
  EXPECT_NE(d.find("data-legends-overlap=\"0\""), std::string::npos) << d.substr(0, 600);
  EXPECT_NE(d.find("railscope (busbw p50)"), std::string::npos);
  EXPECT_NE(d.find("built-in IB (busbw p50)"), std::string::npos);
  EXPECT_EQ(d.find("this run"), std::string::npos);
  EXPECT_NE(d.find("data-fabric-windows=\"2\""), std::string::npos) << d.substr(0, 600);
  EXPECT_NE(d.find("<td class=\"l\">mlx5_0:1</td>"), std::string::npos);
}

namespace fs = std::filesystem;

std::string one_profile() {
  const std::string dir = fresh_profile_dir("report-out");
  ProfilerDriver drv(6);
  EXPECT_TRUE(drv.loaded()) << drv.load_error();
  EXPECT_EQ(drv.init(0xbeef, 0, 2, 1), ncclSuccess);
  drv.run_coll({}, 1000);
  EXPECT_EQ(drv.finalize(), ncclSuccess);
  return dir;
}

TEST(ReportOutput, HtmlReplacesALinkPlantedAtItsNameAndLeavesTheTargetAlone) {
  const std::string dir = one_profile();
  const fs::path victim = fs::path(dir) / "victim";
  std::ofstream(victim) << "keep me\n";
  const fs::path out = fs::path(dir) / "out";
  fs::create_directories(out);
  const fs::path page = out / "report.html";
  fs::create_symlink(victim, page);
  ASSERT_EQ(run(std::string(RAILSCOPE_CLI) + " report " + dir + " --html " + page.string() + " > /dev/null"),
            0);
  EXPECT_EQ(slurp(victim), "keep me\n");
  EXPECT_FALSE(fs::is_symlink(page));
  EXPECT_NE(slurp(page).find("<svg"), std::string::npos);
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator{}), 1)
      << "no temporary file left";
}

TEST(ReportOutput, HtmlToAFolderThatCannotBeWrittenIsAClearError) {
  const std::string dir = one_profile();
  const std::string err = dir + "/stderr";
  const std::string out = dir + "/stdout";
  // EX_CANTCREAT, found before the report is printed.
  EXPECT_EQ(run(std::string(RAILSCOPE_CLI) + " report " + dir + " --html " + dir + "/missing/report.html > " +
                out + " 2> " + err),
            73);
  EXPECT_NE(slurp(err).find("missing"), std::string::npos) << slurp(err);
  EXPECT_EQ(slurp(out), "");
}

}  // namespace
}  // namespace railscope::abi_test
