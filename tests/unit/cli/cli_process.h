// SPDX-License-Identifier: Apache-2.0
// The built `railscope` binary run as a user runs it, in a child process whose stdout and stderr the
// test reads: whole (run) or line by line while it keeps running (Child::next_line), e.g. a command
// that polls files the test writes between two of its passes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace railscope::testing_cli {

class Child {
 public:
  // argv[0] is the program's path; stdin is /dev/null.
  explicit Child(const std::vector<std::string>& argv);
  ~Child();  // a child still running is killed and reaped
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  // Its next stdout line (without the newline); nullopt when its stdout ended or `timeout` passed first.
  std::optional<std::string> next_line(std::chrono::milliseconds timeout);
  // Reads its output to the end and waits for it: its exit status, -1 when a signal ended it or it is
  // still running after `timeout` (then it is killed).
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // Everything it wrote so far.
  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

 private:
  // Reads what is ready on its pipes, waiting at most `timeout`; false when both have ended.
  bool pump(std::chrono::milliseconds timeout);

  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  std::string out_, err_;
  size_t lines_taken_ = 0;  // bytes of out_ handed out by next_line
  bool reaped_ = false;
  int status_ = -1;
};

struct Ran {
  int status = -1;  // exit status; -1 when a signal ended it or it timed out
  std::string out, err;
};
Ran run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace railscope::testing_cli
