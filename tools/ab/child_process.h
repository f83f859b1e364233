// SPDX-License-Identifier: Apache-2.0
// Runs one command as a child process with a modified environment and waits for it, forwarding
// SIGINT/SIGTERM to it so a `railscope ab` under a scheduler stops its job cleanly.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace railscope::ab {

// name -> value to set, or std::nullopt to remove the variable from the child's environment.
using EnvChanges = std::map<std::string, std::optional<std::string>>;

struct ChildResult {
  bool started = false;
  std::string start_error;   // why it could not be started (when !started)
  int exit_code = -1;        // valid when exited normally
  int signal = 0;            // non-zero when killed by a signal
  bool interrupted = false;  // we received SIGINT/SIGTERM while it ran (and forwarded it)

  bool ok() const { return started && signal == 0 && exit_code == 0; }
  std::string describe() const;  // "exit status 3", "killed by signal 9 (Killed)", ...
};

// The current environment with `changes` applied, as NAME=VALUE strings.
std::vector<std::string> environment_with(const EnvChanges& changes);

// Starts argv[0] (searched in PATH) with `env`; blocks until it ends. `discard_stdout`: the child's
// standard output goes to /dev/null (its standard error is kept).
ChildResult run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      bool discard_stdout = false);

}  // namespace railscope::ab
