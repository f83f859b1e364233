// SPDX-License-Identifier: Apache-2.0
// Runs the built `railscope` CLI (RAILSCOPE_CLI_PATH) with arguments and returns its exit status and its
// stdout and stderr together.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace railscope::abi_test {

struct CliRun {
  int rc = -1;
  std::string out;
};

inline CliRun run_cli(const std::string& args) {
  CliRun r;
  const std::string cmd = std::string(RAILSCOPE_CLI_PATH) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace railscope::abi_test
