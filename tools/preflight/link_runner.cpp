// SPDX-License-Identifier: Apache-2.0
// Link tasks as netbench child processes (see link_runner.h).
#include "link_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "json_fields.h"
#include "railscope/node/ethtool_stats.h"
#include "railscope/node/port_sampler.h"
#include "railscope/node/sysfs.h"

namespace railscope::preflight {
namespace {

struct Child {
  pid_t pid = -1;
  int out = -1;  // client: its stdout
  int status = -1;
  bool done = false;
  std::string output;
};

Child spawn(const std::vector<std::string>& args, bool capture) {
  int fds[2] = {-1, -1};
  if (capture && ::pipe2(fds, O_CLOEXEC) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(capture ? fds[1] : devnull, STDOUT_FILENO);
    std::vector<char*> argv;
    static char exe[] = "/proc/self/exe";
    argv.push_back(exe);
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(exe, argv.data());
    ::_exit(127);
  }
  if (capture) ::close(fds[1]);
  Child c;
  c.pid = pid;
  c.out = capture ? fds[0] : -1;
  if (pid < 0 && c.out >= 0) ::close(c.out), c.out = -1;
  return c;
}

void drain(Child& c) {
  if (c.out < 0) return;
  char buf[4096];
  while (c.output.size() < (1u << 20)) {
    const ssize_t n = ::read(c.out, buf, sizeof buf);
    if (n > 0) {
      c.output.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  ::close(c.out);
  c.out = -1;
}

}  // namespace

std::vector<std::string> netbench_args(const LinkTask& t, const LinkOptions& o) {
  std::vector<std::string> a{"netbench",    t.server ? "server" : "client",
                             "--dev",       t.dev,
                             "--oob-host",  t.oob_host,
                             "--oob-port",  std::to_string(t.oob_port),
                             "--timeout",   std::to_string(o.timeout_s),
                             "--log-level", o.log_level};
  if (!o.plugin.empty()) a.insert(a.end(), {"--plugin", o.plugin});
  a.insert(a.end(), {"--poll", o.poll});
  if (t.server) return a;
  a.insert(a.end(), {"--json", "--no-verify"});
  if (t.measure == Measure::Bandwidth)
    a.insert(a.end(), {"--mode", "bw", "--min-size", std::to_string(o.size), "--max-size",
                       std::to_string(o.size), "--bytes-per-size", std::to_string(o.bytes)});
  else
    a.insert(a.end(), {"--mode", "lat", "--min-size", "8", "--max-size", "8", "--lat-iters",
                       std::to_string(o.lat_iters)});
  return a;
}

std::vector<TaskResult> run_tasks(const std::vector<LinkTask>& tasks, const LinkOptions& o) {
  // Each task's port, sampled before its child starts and after the last child ended.
  const node::Sysfs sysfs(o.sysfs_root.empty() ? node::Sysfs::default_root() : o.sysfs_root);
  const auto ethtool = o.counters ? node::ethtool_source_for(sysfs) : nullptr;
  std::vector<node::PortSampler> samplers;
  std::vector<node::PortCounters> before;
  if (o.counters)
    for (const auto& t : tasks) {
      samplers.emplace_back(sysfs, t.dev, t.port, t.netdev, ethtool.get());
      before.push_back(samplers.back().sample());
    }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Child> children;
  for (const auto& t : tasks) children.push_back(spawn(netbench_args(t, o), !t.server));
  // Clients print a few hundred bytes: read them as they exit; every child past the deadline is killed.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_s + 15);
  size_t left = 0;
  for (auto& c : children) left += c.pid > 0 ? 1 : 0;
  while (left > 0) {
    for (auto& c : children) {
      if (c.pid <= 0 || c.done) continue;
      int status = 0;
      const pid_t r = ::waitpid(c.pid, &status, WNOHANG);
      if (r == c.pid) {
        c.done = true;
        c.status = status;
        drain(c);
        --left;
      }
    }
    if (left == 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      for (auto& c : children)
        if (c.pid > 0 && !c.done) {
          ::kill(c.pid, SIGKILL);
          ::waitpid(c.pid, &c.status, 0);
          c.done = true;
          c.status = -1;
          drain(c);
        }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<TaskResult> results;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const LinkTask& t = tasks[i];
    Child& c = children[i];
    TaskResult r;
    r.rail = t.rail;
    if (i < samplers.size())
      r.counters =
          end_counters(before[i], samplers[i].sample(), samplers[i].files() > 0, t.netdev.empty(), seconds);
    const std::string who = std::string(t.server ? "netbench server on " : "netbench client on ") + t.dev;
    if (c.pid <= 0) {
      r.error = who + ": cannot start";
    } else if (c.status == -1) {
      r.error = who + ": killed after " + std::to_string(o.timeout_s + 15) + " s";
    } else if (!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0) {
      r.error = who + ": exit status " + std::to_string(WIFEXITED(c.status) ? WEXITSTATUS(c.status) : -1) +
                " (its stderr is this rank's)";
    } else if (t.server) {
      r.ok = true;
    } else {
      const auto j = nlohmann::json::parse(c.output, nullptr, false);
      const auto& rows = j.is_object() && j.contains("results") ? j["results"] : nlohmann::json();
      if (!rows.is_array() || rows.empty() || !rows[0].is_object()) {
        r.error = who + ": no results in its output";
      } else if (t.measure == Measure::Bandwidth) {
        r.gbs = finite_number(rows[0], "gbs");
        r.ok = r.gbs > 0;
        if (!r.ok) r.error = who + ": no bandwidth measured";
      } else {
        r.lat_us = finite_number(rows[0], "lat_p50_us");
        r.ok = r.lat_us > 0;
        if (!r.ok) r.error = who + ": no latency measured";
      }
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace railscope::preflight
