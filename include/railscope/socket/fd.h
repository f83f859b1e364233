// SPDX-License-Identifier: Apache-2.0
// An owning file descriptor: closed when the owner goes, moved never copied. The one descriptor type of
// railscope's sockets (the net plugin's out-of-band channel and TCP engine, netbench, preflight).
#pragma once

#include <unistd.h>

namespace railscope::socket {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  // Closes the descriptor held (if any) and holds `fd` instead.
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  // Gives up ownership: the caller closes what is returned.
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace railscope::socket
