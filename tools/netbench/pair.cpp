// SPDX-License-Identifier: Apache-2.0
// --pair DEV_A,DEV_B: both ends on one node, as two processes (like two ranks): a server on DEV_A
// (receives) and a client on DEV_B (sends, prints). The parent owns the out-of-band listening socket
// and hands it to the server, so no port can be taken in between.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cpus.h"
#include "oob.h"
#include "railscope/cli/exit_status.h"
#include "railscope/cli/logging.h"
#include "runner.h"

namespace railscope::netbench {

namespace {

// `cpu` >= 0: the child runs on that CPU only (--pin-cpus).
pid_t spawn(const char* exe, const std::vector<std::string>& args, int keep_fd, int cpu) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  if (cpu >= 0 && !pin_to_cpu(cpu)) {
    std::fprintf(stderr, "netbench: cannot run on CPU %d: %s\n", cpu, std::strerror(errno));
    _exit(127);
  }
  if (keep_fd >= 0) {
    const int flags = fcntl(keep_fd, F_GETFD);
    fcntl(keep_fd, F_SETFD, flags & ~FD_CLOEXEC);
  }
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(exe, argv.data());
  std::fprintf(stderr, "netbench: cannot run %s: %s\n", exe, std::strerror(errno));
  _exit(127);
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int run_pair(const Options& o, const char* self_exe) {
  const auto comma = o.pair.find(',');
  if (comma == std::string::npos || comma == 0 || comma + 1 == o.pair.size()) {
    std::fprintf(stderr, "netbench: --pair wants two devices: --pair DEV_A,DEV_B (e.g. rxe0,rxe1)\n");
    return cli::kExitUsage;
  }
  const std::string dev_a = o.pair.substr(0, comma);
  const std::string dev_b = o.pair.substr(comma + 1);
  CpuPair cpus;
  if (!o.pin_cpus.empty()) {
    std::string why;
    const std::optional<CpuPair> pinned = parse_cpu_pair(o.pin_cpus, &why);
    if (!pinned) {
      std::fprintf(stderr, "netbench: %s\n", why.c_str());
      return cli::kExitUsage;
    }
    cpus = *pinned;
  }
  try {
    OobListener listener = OobListener::bind("127.0.0.1", 0);
    const int port = listener.port();

    std::vector<std::string> server = {"netbench", "server",   "--dev",
                                       dev_a,      "--oob-fd", std::to_string(listener.fd())};
    std::vector<std::string> client = {"netbench",   "client",    "--dev",      dev_b,
                                       "--oob-host", "127.0.0.1", "--oob-port", std::to_string(port)};
    for (const auto& a : o.forward_args()) {
      server.push_back(a);
      client.push_back(a);
    }
    if (o.json) client.emplace_back("--json");
    // The children log as this process does (--log-level is the top-level option every command takes).
    for (auto* child : {&server, &client})
      child->insert(child->end(), {"--log-level", cli::log_level_name()});

    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t server_pid = spawn(self_exe, server, listener.fd(), cpus.server);
    const pid_t client_pid = spawn(self_exe, client, -1, cpus.client);
    // The children hold what they need; the parent only waits.
    (void)listener;

    int server_rc = -1, client_rc = -1;
    auto first_failure = std::chrono::steady_clock::time_point{};
    while (server_rc < 0 || client_rc < 0) {
      int status = 0;
      const pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid == server_pid) server_rc = exit_code(status);
      if (pid == client_pid) client_rc = exit_code(status);
      if (pid < 0 && errno == ECHILD) break;
      const bool failed = (server_rc > 0) || (client_rc > 0);
      if (failed && first_failure == std::chrono::steady_clock::time_point{})
        first_failure = std::chrono::steady_clock::now();
      // One end failed: the other gets the time the plugin needs to notice, then is ended.
      if (failed &&
          std::chrono::steady_clock::now() - first_failure > std::chrono::seconds(o.timeout_s + 5)) {
        if (server_rc < 0) kill(server_pid, SIGKILL);
        if (client_rc < 0) kill(client_pid, SIGKILL);
      }
      if (pid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (client_rc != 0) return client_rc < 0 ? 1 : client_rc;
    if (server_rc != 0) return server_rc < 0 ? 1 : server_rc;
    return 0;
  } catch (const BenchError& e) {
    std::fprintf(stderr, "netbench: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace railscope::netbench
