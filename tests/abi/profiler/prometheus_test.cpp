// SPDX-License-Identifier: Apache-2.0
// The Prometheus textfile, through the real plugin. Two ranks of one communicator in one
// process (as a single-process multi-GPU job has them) write one file per process into the folder
// RAILSCOPE_PROFILE_PROM, with job/host/rank labels that keep the ranks apart and the communicator's shape,
// and every version of the file the profiler writes (at init, after a communicator is finalized, at the
// end) passes `promtool check metrics` (Prometheus' own parser and linter; Debian package `prometheus`).
// The file is removed at the last finalize unless RAILSCOPE_PROFILE_PROM_KEEP=1; a name ending in .prom is
// the file itself, and one whose folder is missing is named once while NCCL carries on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "abi/profiler/profile_json.h"

namespace railscope::abi_test {
namespace {

bool have_promtool() { return std::system("command -v promtool >/dev/null 2>&1") == 0; }

// promtool's verdict on a file: exit status and everything it printed.
std::pair<int, std::string> promtool_check(const std::string& file) {
  const std::string cmd = "promtool check metrics < '" + file + "' 2>&1";
  std::FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  std::string out;
  std::array<char, 512> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Every entry of the folder: the one textfile, and nothing else (no temporary file left behind).
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

void run_stream(ProfilerDriver& drv, double busbw_gbs) {
  const uint64_t count = 8ull << 20;  // floats: 32 MiB, judged by the slow detector
  const auto gpu_ns = static_cast<uint64_t>(static_cast<double>(count) * 4.0 * 1.0 / busbw_gbs);  // n=2
  for (uint64_t i = 0; i < 3; ++i) {
    CollSpec s;
    s.count = count;
    s.seq = i;
    drv.run_coll(s, gpu_ns);
  }
  drv.run_p2p("Send", 1024, 1, 5'000);
}

TEST(PrometheusTextfile, OneFilePerProcessLabelledByRankAndAcceptedByPromtool) {
  if (!have_promtool())
    GTEST_SKIP() << "promtool not found: install Debian's `prometheus` package (scripts/install-deps.sh "
                    "does) to check the textfile with Prometheus' own parser";
  const std::string dir = fresh_profile_dir("promtool");
  const std::string prom_dir = dir + "/textfiles";
  setenv("RAILSCOPE_PROFILE_PROM", prom_dir.c_str(), 1);
  setenv("RAILSCOPE_EXPECTED_BUSBW", "100", 1);
  setenv("RAILSCOPE_SLOW_COUNT", "2", 1);
  setenv("RAILSCOPE_PROFILE_PROM_KEEP", "1", 1);
  setenv("RAILSCOPE_PROFILE_TAG", "job-7", 1);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  const std::string file = prom_dir + "/railscope-" + host + "-" + std::to_string(getpid()) + ".prom";

  ProfilerDriver r0(6), r1(5);
  ASSERT_TRUE(r0.loaded() && r1.loaded()) << r0.load_error() << r1.load_error();
  ASSERT_EQ(r0.init(0xfeed, 0, 2, 2, "tp\xff\"grp"), ncclSuccess);
  ASSERT_EQ(r1.init(0xfeed, 1, 2, 2, "tp\xff\"grp"), ncclSuccess);
  std::vector<std::string> versions;  // every version of the file, in order
  versions.push_back(slurp(file));
  run_stream(r0, 90.0);  // healthy
  run_stream(r1, 40.0);  // slow: a coll.slow.* diagnosis on rank 1 only
  ASSERT_EQ(r1.finalize(), ncclSuccess);
  versions.push_back(slurp(file));
  ASSERT_EQ(r0.finalize(), ncclSuccess);
  versions.push_back(slurp(file));
  for (const char* v : {"RAILSCOPE_PROFILE_PROM", "RAILSCOPE_EXPECTED_BUSBW", "RAILSCOPE_SLOW_COUNT",
                        "RAILSCOPE_PROFILE_PROM_KEEP", "RAILSCOPE_PROFILE_TAG"})
    unsetenv(v);

  EXPECT_EQ(entries(prom_dir), std::vector<std::string>{std::filesystem::path(file).filename().string()});
  const std::string& last = versions.back();
  const std::string shape = ",comm_ranks=\"2\",comm_nodes=\"2\"";
  auto who = [&](const char* rank) {
    return std::string("job=\"job-7\",host=\"") + host + "\",rank=\"" + rank + "\",local_rank=\"\"";
  };
  for (const char* rank : {"0", "1"}) {
    const std::string labels = who(rank) + shape;
    EXPECT_NE(last.find("railscope_collective_duration_seconds_count{" + labels +
                        ",op=\"AllReduce\",size_class=\"large\"} 3"),
              std::string::npos)
        << "rank " << rank << "\n"
        << last;
    EXPECT_NE(last.find("railscope_operations_total{" + labels + ",op=\"Send\"} 1"), std::string::npos)
        << last;
  }
  EXPECT_NE(last.find("railscope_events_dropped_total{" + who("0") + ",kind=\"coll\"} 0"), std::string::npos);
  EXPECT_EQ(last.find("0x000000000000feed"), std::string::npos)
      << "finalized: no info series, no id elsewhere";
  EXPECT_NE(
      versions[0].find("railscope_communicator_info{" + who("0") + shape +
                       ",comm=\"0x000000000000feed\",comm_name=\"tp\xef\xbf\xbd\\\"grp\",comm_rank=\"0\"} 1"),
      std::string::npos)
      << versions[0];
  // Rank 1 at 40 GB/s: busbw histogram counts it at or below 5e10 bytes/s; its diagnosis is its own.
  EXPECT_NE(last.find("railscope_busbw_bytes_per_second_bucket{" + who("1") + shape +
                      ",op=\"AllReduce\",size_class=\"large\",le=\"5e+10\"} 3"),
            std::string::npos)
      << last;
  EXPECT_NE(last.find("railscope_diagnoses_total{" + who("1") + shape + ",id=\"coll.slow\"} 1"),
            std::string::npos)
      << last;
  EXPECT_EQ(last.find("railscope_diagnoses_total{" + who("0")), std::string::npos) << "rank 0 was healthy";
  EXPECT_NE(last.find("# TYPE railscope_profiler_last_write_timestamp_seconds gauge"), std::string::npos);

  for (size_t i = 0; i < versions.size(); ++i) {
    ASSERT_FALSE(versions[i].empty()) << "version " << i << " of " << file;
    // Each label set once (promtool does not check this; node_exporter rejects the file).
    std::set<std::string> samples;
    std::istringstream lines(versions[i]);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty() || line[0] == '#') continue;
      EXPECT_TRUE(samples.insert(line.substr(0, line.rfind(' '))).second) << "duplicate: " << line;
    }
    const std::string copy = dir + "/version" + std::to_string(i) + ".prom.txt";
    std::ofstream(copy) << versions[i];
    const auto [rc, out] = promtool_check(copy);
    EXPECT_EQ(rc, 0) << "promtool check metrics, version " << i << ":\n" << out << "\n" << versions[i];
    EXPECT_EQ(out, "") << "lint findings in version " << i << ":\n" << out;
  }
}

// One communicator, one collective, finalized.
void one_collective() {
  ProfilerDriver drv(6);
  ASSERT_TRUE(drv.loaded()) << drv.load_error();
  ASSERT_EQ(drv.init(0xf11e, 0, 2, 1), ncclSuccess);
  drv.run_coll({}, 1000);
  ASSERT_EQ(drv.finalize(), ncclSuccess);
}

// Unless asked to keep it, the file goes when the last communicator is finalized: a finished job's series
// must not stay in every scrape.
TEST(PrometheusTextfile, RemovedAtTheLastFinalizeUnlessKept) {
  const std::string dir = fresh_profile_dir("promgone");
  const std::string prom_dir = dir + "/textfiles";
  setenv("RAILSCOPE_PROFILE_PROM", prom_dir.c_str(), 1);
  ProfilerDriver a(6), b(6);
  ASSERT_TRUE(a.loaded() && b.loaded()) << a.load_error();
  ASSERT_EQ(a.init(0xa, 0, 2, 1), ncclSuccess);
  ASSERT_EQ(b.init(0xb, 0, 2, 1), ncclSuccess);
  a.run_coll({}, 1000);
  ASSERT_EQ(a.finalize(), ncclSuccess);
  EXPECT_EQ(entries(prom_dir).size(), 1u) << "a communicator is still alive";
  ASSERT_EQ(b.finalize(), ncclSuccess);
  unsetenv("RAILSCOPE_PROFILE_PROM");
  EXPECT_EQ(entries(prom_dir), std::vector<std::string>{});
}

// A name ending in .prom is the process's file (never a folder); written 0644, replaced atomically.
TEST(PrometheusTextfile, ADotPromNameIsTheFile) {
  const std::string dir = fresh_profile_dir("promfile");
  const std::string file = dir + "/rank0.prom";
  std::ofstream(file) << "# an older version\n";
  setenv("RAILSCOPE_PROFILE_PROM", file.c_str(), 1);
  setenv("RAILSCOPE_PROFILE_PROM_KEEP", "1", 1);
  CapturedLog::clear();
  one_collective();
  unsetenv("RAILSCOPE_PROFILE_PROM");
  unsetenv("RAILSCOPE_PROFILE_PROM_KEEP");
  ASSERT_TRUE(std::filesystem::is_regular_file(file));
  EXPECT_NE(slurp(file).find("railscope_operations_total{"), std::string::npos) << slurp(file);
  EXPECT_EQ(std::filesystem::status(file).permissions() & std::filesystem::perms::all,
            std::filesystem::perms(0644));
  for (const auto& l : CapturedLog::lines())
    EXPECT_EQ(l.text.find("write_failed"), std::string::npos) << l.text;
}

// A .prom name in a folder that does not exist: said once, clearly; no folder is made; NCCL carries on.
TEST(PrometheusTextfile, AMissingFolderIsNamedOnceAndNcclCarriesOn) {
  const std::string dir = fresh_profile_dir("promnodir");
  const std::string file = dir + "/absent/metrics.prom";
  setenv("RAILSCOPE_PROFILE_PROM", file.c_str(), 1);
  CapturedLog::clear();
  one_collective();
  unsetenv("RAILSCOPE_PROFILE_PROM");
  size_t warnings = 0;
  for (const auto& l : CapturedLog::lines())
    if (l.text.find("[profile.write_failed] no Prometheus textfile (RAILSCOPE_PROFILE_PROM): " + file +
                    ": the folder " + dir + "/absent does not exist") != std::string::npos)
      ++warnings;
  EXPECT_EQ(warnings, 1u);
  EXPECT_FALSE(std::filesystem::exists(dir + "/absent"));
  EXPECT_EQ(of_type(parse_profile(dir), "coll").size(), 1u) << "the profile itself is written";
}

}  // namespace
}  // namespace railscope::abi_test
