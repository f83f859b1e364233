// SPDX-License-Identifier: Apache-2.0
// Two-process helpers for the net plugin's data-path ABI tests: a peer process forked per test
// (optionally moved into another network namespace, RAILSCOPE_TEST_PEER_NETNS, so the two ends talk
// across a veth pair), connected to the test by a socketpair that carries connection handles and
// small notes; establishing connections through the ABI with NCCL's polling contract; waiting on
// requests with a bound; deterministic payloads.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "abi/net_tcp/net_api.h"

namespace railscope::abi_test {

using Clock = std::chrono::steady_clock;
inline constexpr std::chrono::seconds kStepTimeout{30};

inline bool write_all(int fd, const void* p, size_t n) {
  auto* b = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t k = ::write(fd, b, n);
    if (k <= 0) return false;
    b += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}
inline bool read_all(int fd, void* p, size_t n) {
  auto* b = static_cast<char*>(p);
  while (n > 0) {
    ssize_t k = ::read(fd, b, n);
    if (k <= 0) return false;
    b += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

struct Peer {
  pid_t pid = -1;
  int fd = -1;
  // Waits for the peer's exit status (-1 when killed or on timeout).
  int wait(std::chrono::seconds bound = std::chrono::seconds(120)) {
    auto end = Clock::now() + bound;
    while (Clock::now() < end) {
      int status = 0;
      pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        pid = -1;
        ::close(fd);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    kill();
    return -1;
  }
  void kill() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      ::close(fd);
      pid = -1;
    }
  }
};

// Starts a peer: this test binary again (a fresh process, so a fresh engine), running `role`
// (see peer_main) with the socketpair's other end as fd. Inside RAILSCOPE_TEST_PEER_NETNS (a name
// under /run/netns) when that is set.
inline Peer spawn_peer(const std::string& role, int version = 12) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return {};
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(sv[0]);
    if (const char* ns = std::getenv("RAILSCOPE_TEST_PEER_NETNS"); ns != nullptr && *ns != '\0') {
      int nsfd = ::open((std::string("/run/netns/") + ns).c_str(), O_RDONLY | O_CLOEXEC);
      if (nsfd < 0 || ::setns(nsfd, CLONE_NEWNET) != 0) {
        std::fprintf(stderr, "peer: cannot enter netns %s\n", ns);
        ::_exit(90);
      }
      ::close(nsfd);
    }
    int fd = ::dup(sv[1]);  // without CLOEXEC: survives the exec
    std::string fd_text = std::to_string(fd), v_text = std::to_string(version);
    char self[] = "/proc/self/exe";
    char peer_flag[] = "--peer";
    char* argv[] = {self,
                    peer_flag,
                    const_cast<char*>(role.c_str()),
                    const_cast<char*>(fd_text.c_str()),
                    const_cast<char*>(v_text.c_str()),
                    nullptr};
    ::execv(self, argv);
    ::_exit(91);
  }
  ::close(sv[1]);
  return Peer{pid, sv[0]};
}

// listen + hand the handle to the other process + accept until the comm is ready.
inline ncclResult_t establish_recv(NetApi& api, int dev, int peer_fd, void** recv_comm, void** listen_comm) {
  char handle[128] = {};
  *recv_comm = nullptr;
  if (ncclResult_t rc = api.listen(dev, handle, listen_comm); rc != ncclSuccess) return rc;
  if (!write_all(peer_fd, handle, sizeof handle)) return ncclSystemError;
  auto end = Clock::now() + kStepTimeout;
  while (*recv_comm == nullptr) {
    if (ncclResult_t rc = api.accept(*listen_comm, recv_comm); rc != ncclSuccess) return rc;
    if (Clock::now() > end) return ncclInternalError;
    if (*recv_comm == nullptr) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return ncclSuccess;
}

inline ncclResult_t establish_send(NetApi& api, int dev, int peer_fd, void** send_comm) {
  char handle[128] = {};
  *send_comm = nullptr;
  if (!read_all(peer_fd, handle, sizeof handle)) return ncclSystemError;
  auto end = Clock::now() + kStepTimeout;
  while (*send_comm == nullptr) {
    if (ncclResult_t rc = api.connect(dev, handle, send_comm); rc != ncclSuccess) return rc;
    if (Clock::now() > end) return ncclInternalError;
    if (*send_comm == nullptr) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return ncclSuccess;
}

// Polls test() until done, an error, or the bound (then ncclInternalError).
inline ncclResult_t wait_request(NetApi& api, void* req, int* sizes,
                                 std::chrono::milliseconds bound = std::chrono::milliseconds(60000)) {
  auto end = Clock::now() + bound;
  for (;;) {
    int done = 0;
    if (ncclResult_t rc = api.test(req, &done, sizes); rc != ncclSuccess) return rc;
    if (done) return ncclSuccess;
    if (Clock::now() > end) return ncclInternalError;
  }
}

// Posts until the plugin accepts (a null request means "call again").
inline ncclResult_t post_send(NetApi& api, void* comm, void* data, size_t size, int tag, void* mh,
                              void** req) {
  auto end = Clock::now() + kStepTimeout;
  *req = nullptr;
  while (*req == nullptr) {
    if (ncclResult_t rc = api.isend(comm, data, size, tag, mh, req); rc != ncclSuccess) return rc;
    if (Clock::now() > end) return ncclInternalError;
  }
  return ncclSuccess;
}
inline ncclResult_t post_recv(NetApi& api, void* comm, int n, void** data, size_t* sizes, int* tags,
                              void** mh, void** req) {
  auto end = Clock::now() + kStepTimeout;
  *req = nullptr;
  while (*req == nullptr) {
    if (ncclResult_t rc = api.irecv(comm, n, data, sizes, tags, mh, req); rc != ncclSuccess) return rc;
    if (Clock::now() > end) return ncclInternalError;
  }
  return ncclSuccess;
}

// Deterministic payload: a xorshift stream seeded by (seed, size).
inline void fill_pattern(std::vector<unsigned char>& buf, size_t size, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + size + 1;
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    buf[i] = static_cast<unsigned char>(x);
  }
}
// Index of the first wrong byte, or SIZE_MAX when all match.
inline size_t check_pattern(const std::vector<unsigned char>& buf, size_t size, uint64_t seed) {
  std::vector<unsigned char> want(size);
  fill_pattern(want, size, seed);
  for (size_t i = 0; i < size; ++i)
    if (buf[i] != want[i]) return i;
  return SIZE_MAX;
}

inline int count_dir_entries(const char* dir) {
  int n = 0;
  std::string cmd;
  if (DIR* d = ::opendir(dir)) {
    while (::readdir(d) != nullptr) ++n;
    ::closedir(d);
  }
  return n;
}

}  // namespace railscope::abi_test
