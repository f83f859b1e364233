// SPDX-License-Identifier: Apache-2.0
#include "child_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

extern char** environ;

namespace railscope::ab {
namespace {

std::atomic<pid_t> g_child{0};
std::atomic<bool> g_interrupted{false};

// A terminal's Ctrl-C (si_code SI_KERNEL) already reaches the child, which shares our process group;
// forward only signals sent to us alone (kill, a scheduler's SIGTERM), so the child gets each once.
extern "C" void forward_signal(int sig, siginfo_t* info, void*) {
  g_interrupted.store(true);
  const pid_t child = g_child.load();
  if (child > 0 && (info == nullptr || info->si_code != SI_KERNEL)) kill(child, sig);
}

// Installs the forwarding handlers for the lifetime of the object and restores the old ones after.
class SignalForwarding {
 public:
  SignalForwarding() {
    struct sigaction sa {};
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SignalForwarding() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

std::vector<char*> c_strings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::string ChildResult::describe() const {
  if (!started) return fmt::format("could not be started: {}", start_error);
  if (signal != 0) return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
  return fmt::format("exit status {}", exit_code);
}

std::vector<std::string> environment_with(const EnvChanges& changes) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    const auto eq = entry.find('=');
    const std::string name = entry.substr(0, eq);
    if (changes.count(name) != 0) continue;
    env.push_back(std::move(entry));
  }
  for (const auto& [name, value] : changes) {
    if (value) env.push_back(name + "=" + *value);
  }
  return env;
}

ChildResult run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      bool discard_stdout) {
  ChildResult result;
  if (argv.empty()) {
    result.start_error = "empty command";
    return result;
  }
  SignalForwarding forwarding;
  g_interrupted.store(false);
  auto c_argv = c_strings(argv);
  auto c_env = c_strings(env);
  pid_t pid = 0;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (discard_stdout) posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  // posix_spawnp searches PATH from the caller's environment, which is what a user expects.
  const int rc = posix_spawnp(&pid, c_argv[0], &actions, nullptr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    result.start_error = fmt::format("{}: {}", argv[0], std::strerror(rc));
    return result;
  }
  result.started = true;
  g_child.store(pid);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      result.start_error = fmt::format("waitpid: {}", std::strerror(errno));
      break;
    }
  }
  g_child.store(0);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.interrupted = g_interrupted.load();
  return result;
}

}  // namespace railscope::ab
