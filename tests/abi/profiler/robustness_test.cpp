// SPDX-License-Identifier: Apache-2.0
// The plugin as a guest in NCCL's process: NULL handles and descriptors everywhere, stops out of
// order or twice, exhausted pools, PXN ProxyOps owned by another process, NetPlugin events from a
// net plugin (NCCL's IB descriptor and railscope's own, with a transport error).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "abi/profiler/profile_json.h"

namespace railscope::abi_test {
namespace {

class EveryVersion : public ::testing::TestWithParam<int> {};

TEST_P(EveryVersion, NullHandlesAndDescriptorsAreTolerated) {
  fresh_profile_dir("null");
  ProfilerDriver drv(GetParam());
  ASSERT_TRUE(drv.loaded()) << drv.load_error();
  EXPECT_EQ(drv.raw_finalize(nullptr), ncclSuccess);  // NCCL 2.28.9 may finalize after a failed init
  ASSERT_EQ(drv.init(1, 0, 2, 1), ncclSuccess);
  EXPECT_EQ(drv.raw_stop(nullptr), ncclSuccess);
  EXPECT_EQ(drv.raw_record(nullptr, ncclProfilerProxyStepSendWait, nullptr), ncclSuccess);
  EXPECT_EQ(drv.raw_record(nullptr, ncclProfilerNetPluginUpdate, nullptr), ncclSuccess);
  void* h = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(drv.raw_start(drv.ctx(), &h, nullptr), ncclSuccess);
  EXPECT_EQ(h, nullptr);
  EXPECT_EQ(drv.raw_start(drv.ctx(), nullptr, nullptr), ncclSuccess);
  EXPECT_EQ(drv.raw_start(nullptr, &h, nullptr), ncclSuccess);
  // A step or kernel event whose parent is NULL or not ours is not attributed (and not crashed on).
  EXPECT_EQ(drv.start_proxy_step(nullptr, 0), nullptr);
  int not_a_handle = 42;
  EXPECT_EQ(drv.start_proxy_step(&not_a_handle, 0), nullptr);
  EXPECT_EQ(drv.start_kernel_ch(&not_a_handle, 0, 5), nullptr);
  // Record with NULL args on a real handle.
  void* coll = drv.start_coll({});
  ASSERT_NE(coll, nullptr);
  void* op = drv.start_proxy_op(coll, 0, 1, true);
  void* step = drv.start_proxy_step(op, 0);
  EXPECT_EQ(drv.raw_record(step, ncclProfilerProxyStepSendWait, nullptr), ncclSuccess);
  drv.stop(step);
  drv.stop(op);
  drv.stop(coll);
  EXPECT_EQ(drv.finalize(), ncclSuccess);
}

TEST_P(EveryVersion, OutOfOrderAndDoubleStopsStillGiveOneCompleteRecord) {
  const std::string dir = fresh_profile_dir("order");
  ProfilerDriver drv(GetParam());
  ASSERT_TRUE(drv.loaded()) << drv.load_error();
  ASSERT_EQ(drv.init(2, 0, 2, 1), ncclSuccess);
  CollSpec s;
  s.channels = 1;
  void* coll = drv.start_coll(s);
  void* op = drv.start_proxy_op(coll, 0, 1, false);
  void* step = drv.start_proxy_step(op, 0);
  drv.state(step, ncclProfilerProxyStepRecvWait, 128);
  drv.stop(op);    // the op stops before its step
  drv.stop(step);  // …and the step after
  drv.stop(op);    // twice
  drv.stop(coll);  // Coll stop after its children
  drv.stop(coll);  // twice
  ASSERT_EQ(drv.finalize(), ncclSuccess);
  const auto colls = of_type(parse_profile(dir), "coll");
  ASSERT_EQ(colls.size(), 1u);
  EXPECT_TRUE(colls[0].at("complete").get<bool>());
  EXPECT_EQ(colls[0].at("timing"), "cpu_proxy");
}

TEST_P(EveryVersion, ExhaustedPoolsDropAndCount) {
  const std::string dir = fresh_profile_dir("pool");
  setenv("RAILSCOPE_PROFILE_POOL_COLLS", "4", 1);
  setenv("RAILSCOPE_PROFILE_POOL_PROXY", "16", 1);
  ProfilerDriver drv(GetParam());
  ASSERT_TRUE(drv.loaded()) << drv.load_error();
  ASSERT_EQ(drv.init(3, 0, 2, 1), ncclSuccess);
  std::vector<void*> colls;
  int null_handles = 0;
  for (int i = 0; i < 40; ++i) {
    CollSpec s;
    s.seq = static_cast<uint64_t>(i);
    void* c = drv.start_coll(s);
    if (c == nullptr) ++null_handles;
    colls.push_back(c);
  }
  EXPECT_GE(null_handles, 36);
  // Children of NULL parents and far more proxy events than the pool holds.
  std::vector<void*> ops;
  for (int i = 0; i < 40; ++i) ops.push_back(drv.start_proxy_op(colls[static_cast<size_t>(i)], 0, 1, true));
  for (void* o : ops) drv.stop(drv.start_proxy_step(o, 0));
  for (void* o : ops) drv.stop(o);
  for (void* c : colls) drv.stop(c);
  ASSERT_EQ(drv.finalize(), ncclSuccess);
  unsetenv("RAILSCOPE_PROFILE_POOL_COLLS");
  unsetenv("RAILSCOPE_PROFILE_POOL_PROXY");
  const auto all = parse_profile(dir);
  const auto summary = of_type(all, "summary");
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_GE(summary[0].at("dropped").at("coll").get<int>(), 36);
  EXPECT_GT(summary[0].at("dropped").at("proxy_op").get<int>(), 0);
  EXPECT_EQ(of_type(all, "coll").size(), 4u);
  bool dropped_diag = false;
  for (const auto& d : of_type(all, "diag")) dropped_diag |= d.at("id") == "profile.dropped";
  EXPECT_TRUE(dropped_diag);
}

TEST_P(EveryVersion, PxnProxyOpsFromAnotherProcessAreNeverDereferenced) {
  const std::string dir = fresh_profile_dir("pxn");
  ProfilerDriver drv(GetParam());
  ASSERT_TRUE(drv.loaded()) << drv.load_error();
  ASSERT_EQ(drv.init(4, 0, 2, 1), ncclSuccess);
  // parentObj is an address in the other process: an unmapped pointer here.
  void* foreign_parent = reinterpret_cast<void*>(uintptr_t{0xdead0000});
  void* op = drv.start_proxy_op(foreign_parent, 3, 1, true, getpid() + 100000);
  void* step = drv.start_proxy_step(op, 0);
  drv.state(step, ncclProfilerProxyStepSendWait, 64);
  drv.stop(step);
  drv.stop(op);
  ASSERT_EQ(drv.finalize(), ncclSuccess);
  const auto summary = of_type(parse_profile(dir), "summary");
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0].at("pxn_proxy_ops"), 1);
}

INSTANTIATE_TEST_SUITE_P(Abi, EveryVersion, ::testing::Values(1, 2, 3, 4, 5, 6),
                         [](const auto& p) { return "v" + std::to_string(p.param); });

class NetVersion : public ::testing::TestWithParam<int> {};

TEST_P(NetVersion, NetPluginEventsGivePerQpStatsAndTransportErrors) {
  const std::string dir = fresh_profile_dir("net");
  CapturedLog::clear();
  ProfilerDriver drv(GetParam());
  ASSERT_TRUE(drv.loaded()) << drv.load_error();
  ASSERT_EQ(drv.init(5, 1, 2, 2), ncclSuccess);
  void* coll = drv.start_coll({});
  drv.stop(coll);
  void* op = drv.start_proxy_op(coll, 0, 0, true);
  void* step = drv.start_proxy_step(op, 0);
  // NCCL's IB descriptor v1: three work requests on QP 77 of device 1.
  ncclProfilerNetIbDescr_v1_t ib{};
  ib.type = ncclProfileQp;
  ib.qp.device = 1;
  ib.qp.qpNum = 77;
  ib.qp.length = 1000;
  for (int i = 0; i < 3; ++i) drv.stop(drv.start_net(step, NCCL_PROFILER_NET_TYPE_IB | 1, &ib));
  // An unknown descriptor type/version must not be interpreted.
  EXPECT_EQ(drv.start_net(step, (7u << 16) | 1, &ib), nullptr);
  EXPECT_EQ(drv.start_net(step, NCCL_PROFILER_NET_TYPE_IB | 9, &ib), nullptr);
  // railscope's own descriptor with a failed completion.
  nccl::RailscopeNetQp_v1 rq{ncclProfileQp, 0, 12, 0, 5, 4096};
  void* ev =
      drv.start_net(step, static_cast<int64_t>(nccl::kNetTypeRailscope | nccl::kNetRailscopeVersion), &rq);
  ASSERT_NE(ev, nullptr);
  nccl::RailscopeNetCompletion_v1 done{12, 129, 0, "wc.retry_exceeded", 0};
  drv.state(ev, ncclProfilerNetPluginUpdate, 0, &done);
  drv.stop(ev);
  drv.stop(nullptr);  // NCCL forwards NetPlugin stops even for NULL handles
  drv.stop(step);
  drv.stop(op);
  void* k = drv.start_kernel_ch(coll, 0, 10);
  drv.state(k, ncclProfilerKernelChStop, 20);
  drv.stop(k);
  void* k2 = drv.start_kernel_ch(coll, 1, 10);
  drv.state(k2, ncclProfilerKernelChStop, 30);
  drv.stop(k2);
  ASSERT_EQ(drv.finalize(), ncclSuccess);
  const auto all = parse_profile(dir);
  const auto qps = of_type(all, "qp");
  ASSERT_EQ(qps.size(), 2u);
  bool saw_ib = false, saw_rs = false;
  for (const auto& q : qps) {
    if (q.at("source") == "ib") {
      saw_ib = true;
      EXPECT_EQ(q.at("device"), 1);
      EXPECT_EQ(q.at("qp"), 77);
      EXPECT_EQ(q.at("wrs"), 3);
      EXPECT_EQ(q.at("bytes"), 3000);
      EXPECT_EQ(q.at("completions"), 3);
    } else {
      saw_rs = true;
      EXPECT_EQ(q.at("qp"), 12);
      // The v3 ABI has no NetPlugin update arguments, so a completion status cannot reach the profiler.
      EXPECT_EQ(q.at("errors"), GetParam() >= 4 ? 1 : 0);
    }
  }
  EXPECT_TRUE(saw_ib && saw_rs);
  int transport_diags = 0;
  for (const auto& d : of_type(all, "diag"))
    if (d.at("id") == "wc.retry_exceeded") {
      ++transport_diags;
      EXPECT_NE(d.at("detail").get<std::string>().find("QP 12"), std::string::npos);
    }
  EXPECT_EQ(transport_diags, GetParam() >= 4 ? 1 : 0);
  if (GetParam() >= 4) {
    EXPECT_TRUE(CapturedLog::contains("wc.retry_exceeded")) << "v4+ give NCCL's logger";
  }
  const auto colls = of_type(all, "coll");
  ASSERT_EQ(colls.size(), 1u);
  if (GetParam() >= 4) {
    EXPECT_EQ(colls[0].at("timing"), "gpu");
    EXPECT_NEAR(colls[0].at("time_us").get<double>(), 0.02, 1e-9);  // 10 ns → 30 ns GPU span
  }
}

INSTANTIATE_TEST_SUITE_P(Abi, NetVersion, ::testing::Values(3, 4, 5, 6),
                         [](const auto& p) { return "v" + std::to_string(p.param); });

}  // namespace
}  // namespace railscope::abi_test

namespace railscope::abi_test {
namespace {

TEST(Guest, NothingIsWrittenToStdout) {
  fresh_profile_dir("stdout");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    setenv("RAILSCOPE_HANG_SECONDS", "1", 1);
    setenv("NCCL_DEBUG", "INFO", 1);  // v1 has no NCCL logger: stderr only, never stdout
    ProfilerDriver drv(1);
    if (!drv.loaded() || drv.init(0, 0, 2, 1) != ncclSuccess) _exit(3);
    drv.run_coll({}, 1000);
    void* stuck = drv.start_coll({});  // and one that hangs, so the watchdog speaks
    drv.stop(drv.start_proxy_op(stuck, 0, 1, true));
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));
    fflush(stdout);
    _exit(drv.finalize() == ncclSuccess ? 0 : 4);
  }
  close(fds[1]);
  std::string out;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(out, "");
}

// A collective that starts while the monitor scans its pool was read as in flight for 584 years (the
// scan's time minus a later start wrapped around): a coll.hang in a healthy run, once in CI. Thousands
// of collectives held in flight make every scan long, so that many of the starts that follow land
// inside one, behind the scan's position.
TEST(Guest, CollectivesStartedWhileTheMonitorScansAreNotHangs) {
  const std::string dir = fresh_profile_dir("scan");
  // Pools far larger than the collectives in flight (the held ones, and ~400 in their 20 ms grace at any
  // time with four ProxyOps each), so that a monitor held off the CPU on a loaded host drops nothing.
  setenv("RAILSCOPE_PROFILE_POOL_COLLS", "16384", 1);
  setenv("RAILSCOPE_PROFILE_POOL_PROXY", "65536", 1);
  ProfilerDriver drv(5);
  ASSERT_TRUE(drv.loaded()) << drv.load_error();
  ASSERT_EQ(drv.init(0x45, 0, 2, 1), ncclSuccess);
  unsetenv("RAILSCOPE_PROFILE_POOL_COLLS");
  unsetenv("RAILSCOPE_PROFILE_POOL_PROXY");
  constexpr int kHeld = 6000;
  std::vector<void*> held;
  for (int i = 0; i < kHeld; ++i) {
    CollSpec s;
    s.seq = static_cast<uint64_t>(i);
    held.push_back(drv.start_coll(s));
    drv.stop(held.back());  // enqueued; its kernel has not started
  }
  int ran = 0;
  for (const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(800);
       std::chrono::steady_clock::now() < until; ++ran) {
    CollSpec s;
    s.seq = static_cast<uint64_t>(kHeld + ran);
    drv.run_coll(s, 1000);
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  for (void* c : held) drv.stop(drv.start_kernel_ch(c, 0, 1));
  ASSERT_EQ(drv.finalize(), ncclSuccess);
  const auto all = parse_profile(dir);
  EXPECT_EQ(of_type(all, "coll").size(), static_cast<size_t>(kHeld + ran));
  for (const auto& d : of_type(all, "diag")) ADD_FAILURE() << d.dump();
  if (!HasFailure()) std::filesystem::remove_all(dir);  // 8 MB of records
}

TEST(BadInput, UnwritableProfileDirWarnsAndKeepsProfiling) {
  setenv("RAILSCOPE_PROFILE_DIR", "/proc/railscope-cannot-exist", 1);
  CapturedLog::clear();
  ProfilerDriver drv(5);
  ASSERT_TRUE(drv.loaded()) << drv.load_error();
  ASSERT_EQ(drv.init(0x42, 0, 2, 1), ncclSuccess) << "a profile that cannot be written must not fail NCCL";
  EXPECT_NE(drv.mask(), 0);
  drv.run_coll({}, 1000);
  EXPECT_EQ(drv.finalize(), ncclSuccess);
  EXPECT_TRUE(CapturedLog::contains("[profile.write_failed] cannot open /proc/railscope-cannot-exist/"));
}

TEST(BadInput, InvalidEnvValuesAreReportedAndDefaultsUsed) {
  const std::string dir = fresh_profile_dir("badenv");
  setenv("RAILSCOPE_EXPECTED_BUSBW", "fast", 1);
  setenv("RAILSCOPE_HANG_SECONDS", "-5", 1);
  setenv("RAILSCOPE_PROFILE_POOL_COLLS", "lots", 1);
  CapturedLog::clear();
  ProfilerDriver drv(5);
  ASSERT_TRUE(drv.loaded()) << drv.load_error();
  ASSERT_EQ(drv.init(0x43, 0, 8, 1), ncclSuccess);
  for (uint64_t i = 0; i < 8; ++i) {
    CollSpec s;
    s.seq = i;
    s.count = 64ull << 20;
    drv.run_coll(s, 100'000'000);  // very slow, but no ceiling is known: no coll.slow
  }
  EXPECT_EQ(drv.finalize(), ncclSuccess);
  for (const char* v : {"RAILSCOPE_EXPECTED_BUSBW", "RAILSCOPE_HANG_SECONDS", "RAILSCOPE_PROFILE_POOL_COLLS"})
    unsetenv(v);
  EXPECT_TRUE(CapturedLog::contains("RAILSCOPE_EXPECTED_BUSBW=fast: not a positive number of GB/s"));
  EXPECT_TRUE(CapturedLog::contains("RAILSCOPE_HANG_SECONDS=-5"));
  EXPECT_TRUE(CapturedLog::contains("RAILSCOPE_PROFILE_POOL_COLLS=lots"));
  const auto all = parse_profile(dir);
  EXPECT_EQ(of_type(all, "coll").size(), 8u) << "defaults used";
  EXPECT_TRUE(of_type(all, "diag").empty());
}

// A communicator name, tag or NCCL_NET value that is not UTF-8 (or holds quotes and control
// characters) must not break a line of the profile: every line parses as strict JSON (nlohmann rejects
// ill-formed UTF-8) and the bad bytes read back as U+FFFD, through the real plugin for each ABI that
// passes a name.
TEST(BadInput, InvalidUtf8InNameTagAndNetKeepsEveryLineValidJson) {
  const std::string fffd = "\xef\xbf\xbd";
  for (int version : {4, 5, 6}) {
    const std::string dir = fresh_profile_dir("utf8");
    setenv("RAILSCOPE_PROFILE_TAG", "run\xff\xfe\"x\n", 1);
    setenv("NCCL_NET", "IB\xc3", 1);
    ProfilerDriver drv(version);
    ASSERT_TRUE(drv.loaded()) << drv.load_error();
    ASSERT_EQ(drv.init(0x51, 0, 2, 1, "grp\xc0\xaf\x01\xe2\x82"), ncclSuccess);
    drv.run_coll({}, 1000);
    ASSERT_EQ(drv.finalize(), ncclSuccess);
    unsetenv("RAILSCOPE_PROFILE_TAG");
    unsetenv("NCCL_NET");
    std::vector<nlohmann::json> all;
    ASSERT_NO_THROW(all = parse_profile(dir)) << "v" << version;
    const auto headers = of_type(all, "header");
    ASSERT_EQ(headers.size(), 1u);
    EXPECT_EQ(headers[0].at("tag"), "run" + fffd + fffd + "\"x\n");
    EXPECT_EQ(headers[0].at("net"), "IB" + fffd);
    const auto comms = of_type(all, "comm");
    ASSERT_EQ(comms.size(), 1u);
    EXPECT_EQ(comms[0].at("name"), "grp" + fffd + fffd + "\x01" + fffd + fffd) << "v" << version;
    EXPECT_EQ(of_type(all, "coll").size(), 1u);
  }
}

}  // namespace
}  // namespace railscope::abi_test
