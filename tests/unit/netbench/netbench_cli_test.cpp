// SPDX-License-Identifier: Apache-2.0
// `railscope netbench` end to end on the host, through a real dlopen'ed plugin (the loopback test
// plugin next to this test): --pair, server/client, JSON, grouped receives, verification failures.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace {

struct Result {
  int rc = -1;
  std::string out;  // stdout and stderr together
  double seconds = 0;
};

Result run(const std::string& args, const std::string& env = "") {
  const std::string cmd = env + " " RAILSCOPE_CLI " netbench " + args + " 2>&1";
  const auto t0 = std::chrono::steady_clock::now();
  Result r;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) r.out.append(buf, n);
  const int status = ::pclose(f);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

const std::string kPlugin = " --plugin " LOOPBACK_PLUGIN;
// The counts these tests ask for, without --min-time's longer second runs (unit-tested in
// NetbenchOptions.ShortPhasesRunAgainLongEnough): the checks here are about data, not duration.
const std::string kCounted = kPlugin + " --min-time 0";

TEST(NetbenchCli, PairMeasuresAndVerifiesEverySize) {
  const Result r = run("--pair lo,lo --min-size 0 --max-size 1M --iters 50 --lat-iters 20 --json" + kCounted);
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  EXPECT_EQ(j["plugin"]["symbol"], "ncclNetPlugin_v12");
  EXPECT_EQ(j["plugin"]["name"], "loopback-test");
  ASSERT_EQ(j["results"].size(), 22u);  // 0, 1, 2, ... 1M
  for (const auto& row : j["results"]) {
    EXPECT_EQ(row["mismatches"], 0);
    EXPECT_GT(row["verified_messages"].get<int>(), 0);
    EXPECT_GT(row["lat_p50_us"].get<double>(), 0);
    EXPECT_GE(row["lat_p99_us"].get<double>(), row["lat_p50_us"].get<double>());
    if (row["size"].get<uint64_t>() > 0) {
      EXPECT_GT(row["gbs"].get<double>(), 0);
      EXPECT_NEAR(row["gbits"].get<double>(), 8 * row["gbs"].get<double>(),
                  1e-4 * row["gbits"].get<double>());
    }
  }
}

// --min-time runs a too-short pass again, longer; the totals count what both passes (and their
// warm-ups) put on the wire, which bench/net_vs_reference divides RoCE packets by. Every message is
// verified, so the verified count, which both passes add to, must equal them.
TEST(NetbenchCli, TotalsCountEveryPassAndWarmup) {
  const Result r = run(
      "--pair lo,lo --min-size 4K --max-size 4K --iters 20 --lat-iters 20 --json --min-time 0.3" + kPlugin);
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  ASSERT_EQ(j["results"].size(), 1u);
  const auto& row = j["results"][0];
  const auto timed_bw = row["bw_messages"].get<uint64_t>();
  const auto timed_lat = row["lat_iters"].get<uint64_t>();
  const auto bw_total = row["bw_messages_total"].get<uint64_t>();
  const auto lat_total = row["lat_round_trips_total"].get<uint64_t>();
  // 20 messages and 20 round trips of 4 KiB take well under 0.3 s on loopback: each ran twice.
  EXPECT_GT(timed_bw, 20u) << row;
  EXPECT_GT(timed_lat, 20u) << row;
  // First pass 20 + warm-up 2 (n / 8), second pass timed + 2; latency warm-up 2 (20 / 10) both times.
  EXPECT_EQ(bw_total, 22 + timed_bw + 2) << row;
  EXPECT_EQ(lat_total, 22 + timed_lat + 2) << row;
  EXPECT_EQ(row["verified_messages"].get<uint64_t>(), bw_total + 2 * lat_total) << row;
}

TEST(NetbenchCli, TableHasOneRowPerSize) {
  const Result r = run("--pair lo,lo --min-size 8 --max-size 64K --iters 20 --lat-iters 10" + kCounted);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("GB/s"), std::string::npos);
  EXPECT_NE(r.out.find("p99 us"), std::string::npos);
  for (const char* size : {" 8 ", " 1K ", " 64K "}) EXPECT_NE(r.out.find(size), std::string::npos) << size;
}

TEST(NetbenchCli, GroupedReceives) {
  for (int n : {2, 8}) {
    const Result r = run("--pair lo,lo --min-size 8 --max-size 256K --iters 64 --mode bw --json --recvs " +
                         std::to_string(n) + kCounted);
    ASSERT_EQ(r.rc, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
    for (const auto& row : j["results"]) {
      EXPECT_EQ(row["recvs"], n);
      EXPECT_EQ(row["mismatches"], 0);
    }
  }
}

TEST(NetbenchCli, CorruptedDataFailsTheRun) {
  const Result r = run("--pair lo,lo --min-size 64 --max-size 64 --iters 10 --lat-iters 5" + kCounted,
                       "LOOPBACK_NET_CORRUPT=1");
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_NE(r.out.find("DATA MISMATCH"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("differs at byte 32"), std::string::npos) << r.out;
  // Without verification the same run passes: the check is what catches it.
  EXPECT_EQ(run("--pair lo,lo --min-size 64 --max-size 64 --iters 10 --lat-iters 5 --no-verify" + kCounted,
                "LOOPBACK_NET_CORRUPT=1")
                .rc,
            0);
}

TEST(NetbenchCli, ServerAndClientOverTcp) {
  const std::string port = std::to_string(20000 + ::getpid() % 20000);
  FILE* server = ::popen(
      (RAILSCOPE_CLI " netbench server --dev lo --oob-port " + port + kCounted + " 2>&1").c_str(), "r");
  ASSERT_NE(server, nullptr);
  const Result c = run("client --dev lo --oob-host 127.0.0.1 --oob-port " + port +
                       " --max-size 4K --iters 10 --lat-iters 5" + kCounted);
  char buf[4096];
  std::string server_out;
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, server)) > 0) server_out.append(buf, n);
  const int status = ::pclose(server);
  EXPECT_EQ(c.rc, 0) << c.out;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << server_out;
  EXPECT_NE(c.out.find("4K"), std::string::npos);
}

// --dev A,B: one client process drives two devices at once (a thread each, as NCCL drives its rails),
// the server of device i on --oob-port + i; both tables, both verified.
TEST(NetbenchCli, OneClientDrivesTwoDevicesAtOnce) {
  const int base = 20000 + (::getpid() + 7) % 20000;
  FILE* servers[2];
  for (int i = 0; i < 2; ++i) {
    servers[i] = ::popen(
        (RAILSCOPE_CLI " netbench server --dev lo --oob-port " + std::to_string(base + i) + kPlugin + " 2>&1")
            .c_str(),
        "r");
    ASSERT_NE(servers[i], nullptr);
  }
  const Result c = run("client --dev lo,lo --oob-host 127.0.0.1 --oob-port " + std::to_string(base) +
                       " --min-size 64K --max-size 64K --iters 20 --mode bw" + kPlugin);
  for (FILE* server : servers) {
    char buf[4096];
    std::string out;
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, server)) > 0) out.append(buf, n);
    const int status = ::pclose(server);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  }
  EXPECT_EQ(c.rc, 0) << c.out;
  size_t rows = 0;
  for (size_t at = c.out.find("64K"); at != std::string::npos; at = c.out.find("64K", at + 1)) ++rows;
  EXPECT_EQ(rows, 2u) << c.out;
  EXPECT_EQ(run("client --dev lo, --oob-port " + std::to_string(base) + " --max-size 8" + kPlugin).rc, 1);
}

TEST(NetbenchCli, MissingPluginIsAClearErrorOnBothEnds) {
  const Result r = run("--pair lo,lo --max-size 8 --timeout 5 --plugin /nonexistent/libnccl-net-x.so");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("cannot load the net plugin"), std::string::npos) << r.out;
  EXPECT_LT(r.seconds, 20);
}

TEST(NetbenchCli, UnknownDeviceNamesTheOnesThatExist) {
  const Result r = run("--pair lo,mlx5_9 --max-size 8 --timeout 5" + kPlugin);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("no device 'mlx5_9' in the plugin (it has: lo)"), std::string::npos) << r.out;
  EXPECT_LT(r.seconds, 20);
}

TEST(NetbenchCli, BadArgumentsAreRejected) {
  EXPECT_NE(run("--pair rxe0 --max-size 8" + kPlugin).rc, 0);
  EXPECT_NE(run("--pair lo,lo --max-size 12Q" + kPlugin).rc, 0);
  EXPECT_NE(run("--pair lo,lo --window 0" + kPlugin).rc, 0);
  EXPECT_NE(run("--pair lo,lo --recvs 9" + kPlugin).rc, 0);
  EXPECT_NE(run("--pair lo,lo --poll busy" + kPlugin).rc, 0);
}

// --pin-cpus A,B: the client runs on CPU B only (the JSON says which CPUs it may use), whichever way round;
// without it, on every CPU the test may use. CPUs this process may not use, or not two of them, are refused.
TEST(NetbenchCli, PinCpusRunsTheClientOnItsCpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  const std::string a = std::to_string(cpus[0]), b = std::to_string(cpus[1]);
  const std::string args = " --min-size 8 --max-size 8 --iters 10 --lat-iters 5 --json" + kCounted;
  for (const auto& [pin, want] : {std::pair{a + "," + b, cpus[1]}, std::pair{b + "," + a, cpus[0]}}) {
    const Result r = run("--pair lo,lo --pin-cpus " + pin + args);
    ASSERT_EQ(r.rc, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
    EXPECT_EQ(j["client_cpus"], nlohmann::json::array({want})) << pin;
  }
  const Result r = run("--pair lo,lo" + args);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out.substr(r.out.find('{')))["client_cpus"], nlohmann::json(cpus));

  const Result outside = run("--pair lo,lo --pin-cpus " + a + "," + std::to_string(CPU_SETSIZE) + args);
  EXPECT_EQ(outside.rc, 64) << outside.out;  // a usage error
  EXPECT_NE(outside.out.find("is not one this process may run on"), std::string::npos) << outside.out;
  for (const char* bad : {"0", "0,", ",1", "x,1", "-1,0", "0,1,2"}) {
    const Result r2 = run(std::string("--pair lo,lo --pin-cpus ") + bad + args);
    EXPECT_EQ(r2.rc, 64) << bad << ": " << r2.out;
    EXPECT_NE(r2.out.find("--pin-cpus wants two CPU numbers"), std::string::npos) << bad << ": " << r2.out;
  }
}

// Both waiting modes run the pre-posted ping-pong (receives alternate between two buffers) with every
// reply verified, at sizes where the two buffers are adjacent slots of one region.
TEST(NetbenchCli, LatencyVerifiedInBothPollModes) {
  for (const char* poll : {"yield", "spin"}) {
    const Result r =
        run(std::string("--pair lo,lo --mode lat --min-size 0 --max-size 64K --lat-iters 40 --json "
                        "--poll ") +
            poll + kCounted);
    ASSERT_EQ(r.rc, 0) << poll << ": " << r.out;
    const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
    for (const auto& row : j["results"]) {
      EXPECT_EQ(row["mismatches"], 0) << poll;
      // Both directions, warmup round trips (lat_iters / 10) included.
      EXPECT_EQ(row["verified_messages"].get<int>(), 2 * (40 + 4)) << poll << " " << row;
    }
  }
}

}  // namespace

namespace {

// A fake sysfs root holding `entry` (e.g. "class/net/lo"), removed on destruction.
struct FakeSysfs {
  std::string root;
  explicit FakeSysfs(const std::string& entry) {
    char tmpl[] = "/tmp/netbench-sysfs-XXXXXX";
    root = ::mkdtemp(tmpl);
    if (!entry.empty()) std::filesystem::create_directories(root + "/" + entry);
  }
  ~FakeSysfs() { std::filesystem::remove_all(root); }
};

}  // namespace

TEST(NetbenchCli, NothingToMeasureFailsWithTheReason) {
  // 3M to 3M holds no power of two: a header and no row with status 0 read as a run that passed.
  for (const std::string mode :
       {"--pair lo,lo", "server --dev lo --oob-port 1", "client --dev lo --oob-port 1"}) {
    const Result r = run(mode + " --min-size 3M --max-size 3M --timeout 5" + kCounted);
    EXPECT_EQ(r.rc, 1) << mode << "\n" << r.out;
    EXPECT_NE(r.out.find("no size to measure: the sizes are the powers of two from --min-size to --max-size, "
                         "and none lies between 3M and 3M (try --min-size 2M --max-size 4M)"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("# railscope netbench:"), std::string::npos) << r.out;
  }
  // Its healthy twin: one power of two in range, one row, status 0, no complaint.
  const Result ok = run("--pair lo,lo --min-size 2M --max-size 3M --iters 4 --lat-iters 2" + kCounted);
  EXPECT_EQ(ok.rc, 0) << ok.out;
  EXPECT_NE(ok.out.find(" 2M "), std::string::npos) << ok.out;
  EXPECT_EQ(ok.out.find("no size to measure"), std::string::npos) << ok.out;
}

TEST(NetbenchCli, RoundedSizesAreSaid) {
  const Result r = run("--pair lo,lo --min-size 3K --max-size 5K --iters 10 --lat-iters 5" + kCounted);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("--min-size 3K is not a power of two: the first size measured is 4K"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--max-size 5K is not a power of two: the last size measured is 4K"),
            std::string::npos)
      << r.out;
  // Said once (by the client), not by each of --pair's processes.
  const size_t first = r.out.find("not a power of two: the first");
  EXPECT_EQ(r.out.find("not a power of two: the first", first + 1), std::string::npos) << r.out;
  // Powers of two (and 0) are measured as given: nothing to say.
  const Result exact = run("--pair lo,lo --min-size 0 --max-size 4K --iters 10 --lat-iters 5" + kCounted);
  ASSERT_EQ(exact.rc, 0) << exact.out;
  EXPECT_EQ(exact.out.find("not a power of two"), std::string::npos) << exact.out;
}

TEST(NetbenchCli, HeaderNamesTheEngine) {
  // The loopback plugin's device is "lo": what it is on this node decides the engine named.
  for (const auto& [entry, engine] : std::vector<std::pair<std::string, std::string>>{
           {"class/net/lo", "TCP"}, {"class/infiniband/lo", "verbs"}, {"", "unknown"}}) {
    const FakeSysfs sysfs(entry);
    const std::string env = "RAILSCOPE_SYSFS_ROOT=" + sysfs.root;
    const Result table =
        run("--pair lo,lo --min-size 8 --max-size 8 --iters 4 --lat-iters 2" + kCounted, env);
    ASSERT_EQ(table.rc, 0) << table.out;
    EXPECT_NE(table.out.find("\"loopback-test\"), engine " + engine + ", data verified"), std::string::npos)
        << entry << "\n"
        << table.out;
    const Result js =
        run("--pair lo,lo --min-size 8 --max-size 8 --iters 4 --lat-iters 2 --json" + kCounted, env);
    ASSERT_EQ(js.rc, 0) << js.out;
    const auto doc = nlohmann::json::parse(js.out.substr(js.out.find('{')), nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << js.out;
    EXPECT_EQ(doc.value("engine", ""), engine) << js.out;
  }
}
