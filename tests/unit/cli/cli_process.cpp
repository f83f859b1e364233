// SPDX-License-Identifier: Apache-2.0
#include "unit/cli/cli_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace railscope::testing_cli {

Child::Child(const std::vector<std::string>& argv) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return;
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return;
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  out_fd_ = out[0];
  err_fd_ = err[0];
  if (pid_ < 0) {
    ::close(out_fd_);
    ::close(err_fd_);
    out_fd_ = err_fd_ = -1;
  }
}

Child::~Child() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) ::close(out_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
}

bool Child::pump(std::chrono::milliseconds timeout) {
  pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
  if (out_fd_ < 0 && err_fd_ < 0) return false;
  if (::poll(fds, 2, static_cast<int>(timeout.count())) <= 0) return true;
  int* const fd[2] = {&out_fd_, &err_fd_};
  std::string* const text[2] = {&out_, &err_};
  for (int i = 0; i < 2; ++i) {
    if (fds[i].revents == 0) continue;
    char buf[4096];
    const ssize_t n = ::read(*fd[i], buf, sizeof buf);
    if (n > 0) {
      text[i]->append(buf, static_cast<size_t>(n));
    } else {
      ::close(*fd[i]);
      *fd[i] = -1;
    }
  }
  return out_fd_ >= 0 || err_fd_ >= 0;
}

std::optional<std::string> Child::next_line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (const size_t nl = out_.find('\n', lines_taken_); nl != std::string::npos) {
      std::string line = out_.substr(lines_taken_, nl - lines_taken_);
      lines_taken_ = nl + 1;
      return line;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || out_fd_ < 0 || !pump(left)) return std::nullopt;
  }
}

int Child::wait(std::chrono::milliseconds timeout) {
  if (reaped_ || pid_ <= 0) return status_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid_, SIGKILL);
      break;
    }
    if (!pump(left)) break;
  }
  int status = 0;
  reaped_ = ::waitpid(pid_, &status, 0) == pid_;
  status_ = reaped_ && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return status_;
}

Ran run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  Child c(argv);
  Ran r;
  r.status = c.wait(timeout);
  r.out = c.out();
  r.err = c.err();
  return r;
}

}  // namespace railscope::testing_cli
