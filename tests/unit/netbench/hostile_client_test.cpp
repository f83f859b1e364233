// SPDX-License-Identifier: Apache-2.0
// A real `railscope netbench server` (through the loopback test plugin) facing a client that sends what
// netbench's own client never would: each bad field must end the server with a clear error,
// told to the client, and exit status 1 — not a crash from a wrapped buffer size. And --oob-host binds
// the server to the address given.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "net_api.h"
#include "oob.h"
#include "protocol.h"
#include "session.h"

namespace railscope::netbench {
namespace {

using namespace std::chrono_literals;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Starts the server as a child process; its stderr goes to `log`. `listen_fd` >= 0: handed over
// (--oob-fd), as --pair does; otherwise `extra` says where to listen.
pid_t start_server(int listen_fd, const std::vector<std::string>& extra, const std::string& log) {
  std::vector<std::string> args = {RAILSCOPE_CLI, "netbench", "server",   "--dev",        "lo",
                                   "--timeout",   "10",       "--plugin", LOOPBACK_PLUGIN};
  if (listen_fd >= 0) args.insert(args.end(), {"--oob-fd", std::to_string(listen_fd)});
  args.insert(args.end(), extra.begin(), extra.end());
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  if (listen_fd >= 0) ::fcntl(listen_fd, F_SETFD, 0);
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(out, 1);
  ::dup2(out, 2);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(argv[0], argv.data());
  ::_exit(127);
}

// Exit status of `pid`, or -1 if it has not ended within `limit` (then it is killed).
int wait_exit(pid_t pid, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  for (;;) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (std::chrono::steady_clock::now() > end) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(20ms);
  }
}

void no_log(ncclDebugLogLevel, unsigned long, const char*, int, const char*, ...) {}

RunParams good_params() {
  RunParams p;
  p.seed = 7;
  p.buffer_bytes = 1 << 20;
  p.timeout_s = 10;
  return p;
}

struct Case {
  const char* name;
  std::function<void(RunParams&)> params;  // applied to good_params()
  bool bad_plan;                           // false: the parameters are refused before connecting
  SizePlan plan;
  const char* error;
};

SizePlan plan_of(uint64_t size, uint32_t recvs, uint32_t window, uint32_t messages, uint32_t warmup) {
  SizePlan p;
  p.size = size;
  p.recvs = recvs;
  p.window = window;
  p.messages = messages;
  p.warmup = warmup;
  return p;
}

// Runs one hostile client against a fresh server; returns what the client was told.
std::string run_case(const Case& c, int* server_rc, std::string* server_log) {
  OobListener l = OobListener::bind("127.0.0.1", 0);
  const std::string log = std::string("/tmp/railscope-hostile-") + c.name + ".log";
  const pid_t pid = start_server(l.fd(), {}, log);
  std::string told;
  try {
    OobSocket oob = oob_connect("127.0.0.1", l.port(), 10s);
    RunParams p = good_params();
    if (c.params) c.params(p);
    oob.send_struct(kMsgHello, p);
    (void)oob.receive_struct<PeerInfo>(kMsgHelloAck, 20s);
    OpenedPlugin plugin = open_plugin(LOOPBACK_PLUGIN);
    if (!plugin.api) throw BenchError("cannot open the loopback plugin: " + plugin.library.error);
    check(plugin.api->init(&no_log), "init");
    {
      Session s(*plugin.api, find_device(*plugin.api, "lo"), 10s);
      s.connect(oob);
      oob.send_struct(kMsgSizeBegin, c.plan);
      (void)oob.receive(kMsgReady, 20s);
      told = "(the server accepted the plan)";
    }
    (void)plugin.api->finalize();
  } catch (const BenchError& e) {
    told = e.what();
  }
  *server_rc = wait_exit(pid, 30s);
  *server_log = slurp(log);
  return told;
}

TEST(NetbenchHostileClient, BadFieldsEndTheServerWithAClearError) {
  const Case cases[] = {
      {"huge_buffer",
       [](RunParams& p) { p.buffer_bytes = UINT64_MAX - 100; },
       false,
       {},
       "netbench registers at most"},
      {"timeout", [](RunParams& p) { p.timeout_s = UINT32_MAX; }, false, {}, "timeout is 4294967295 s"},
      {"size_wraps", nullptr, true, plan_of(uint64_t{1} << 63, 1, 1, 1, 0), "larger than netbench's largest"},
      {"size_too_big", nullptr, true, plan_of(1 << 20, 1, 1, 1, 0), "2 slots do not fit"},
      {"recvs", nullptr, true, plan_of(8, 9, 1, 9, 0), "9 buffers per receive"},
      {"window", nullptr, true, plan_of(8, 1, 0, 1, 0), "window 0"},
      {"warmup", nullptr, true, plan_of(8, 1, 1, 2, 5), "warmup 5 exceeds"},
  };
  for (const Case& c : cases) {
    int rc = 0;
    std::string log;
    const std::string told = run_case(c, &rc, &log);
    EXPECT_NE(told.find("the peer failed"), std::string::npos) << c.name << ": " << told;
    EXPECT_NE(told.find(c.error), std::string::npos) << c.name << ": " << told;
    EXPECT_EQ(rc, 1) << c.name << ": " << log;
    EXPECT_NE(log.find(c.error), std::string::npos) << c.name << ": " << log;
  }
}

// The listening socket's local address in /proc/net/tcp (hex, as the kernel prints it), or "".
std::string listening_address(uint16_t port) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  char want[8];
  std::snprintf(want, sizeof want, ":%04X", port);
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string slot, local, remote, state;
    ss >> slot >> local >> remote >> state;
    if (state == "0A" && local.size() > 5 && local.substr(local.size() - 5) == want)
      return local.substr(0, local.size() - 5);
  }
  return "";
}

TEST(NetbenchHostileClient, ServerListensOnTheAddressGiven) {
  uint16_t port = 0;
  {
    OobListener probe = OobListener::bind("127.0.0.1", 0);
    port = probe.port();
  }
  const std::string log = "/tmp/railscope-hostile-bind.log";
  const pid_t pid = start_server(-1, {"--oob-host", "127.0.0.1", "--oob-port", std::to_string(port)}, log);
  std::string addr;
  for (int i = 0; i < 250 && addr.empty(); ++i) {
    std::this_thread::sleep_for(20ms);
    addr = listening_address(port);
  }
  ::kill(pid, SIGTERM);
  wait_exit(pid, 10s);
  EXPECT_EQ(addr, "0100007F") << "listening on " << addr << "; server log: " << slurp(log);
  EXPECT_NE(slurp(log).find("waiting on 127.0.0.1 port " + std::to_string(port)), std::string::npos)
      << slurp(log);
}

}  // namespace
}  // namespace railscope::netbench
