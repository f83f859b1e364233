// SPDX-License-Identifier: Apache-2.0
// Rank 0 out of open files (tools/preflight/open_files.h, accept_until in railscope/socket/endpoints.h):
// the soft limit is raised to the hard limit, and a connection waiting while no descriptor is free neither
// makes accept spin past its deadline nor hangs its peer. Each case runs in a child process: it lowers its
// own limit, and a spinning accept is killed there instead of hanging the test.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "open_files.h"
#include "rendezvous.h"

namespace railscope::preflight {
namespace {

// Runs `body` in a child; its exit status (0 = passed), or -1 when it ran past `limit`.
int in_child(const std::function<int()>& body, std::chrono::seconds limit) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  const auto until = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

uint16_t port_of(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

// A client socket connected to `listener` on 127.0.0.1 (waiting in its backlog); -1 on failure.
int connect_client(const Fd& listener) {
  const int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port_of(listener.get()));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return ::connect(client, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0 ? client : -1;
}

// A listening socket on 127.0.0.1, a client connected and waiting in its backlog, then every descriptor
// taken up to a small limit; accept_until with a deadline 300 ms away. 0: it returned by the deadline
// (within 2 s) and, with a spare, the client saw its connection closed.
int out_of_descriptors(bool with_spare) {
  std::string error;
  Fd listener = listen_on("127.0.0.1", 0, &error);
  if (!listener) return 10;
  SpareFd spare;
  const int client = connect_client(listener);
  if (client < 0) return 11;
  const rlimit low{64, 64};
  if (::setrlimit(RLIMIT_NOFILE, &low) != 0) return 12;
  while (::open("/dev/null", O_RDONLY | O_CLOEXEC) >= 0) {
  }
  if (errno != EMFILE) return 13;
  const auto t0 = Clock::now();
  std::string peer;
  Fd c = socket::accept_until(listener.get(), t0 + std::chrono::milliseconds(300), &peer,
                              with_spare ? &spare : nullptr)
             .fd;
  const auto took = Clock::now() - t0;
  if (c) return 14;
  if (took > std::chrono::seconds(2)) return 15;
  if (!with_spare) return 0;
  if (spare.closed != 1 || !spare.fd) return 16;
  char b;
  timeval tv{2, 0};
  ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return ::recv(client, &b, 1, 0) == 0 ? 0 : 17;  // the close, not a timeout
}

TEST(OpenFiles, AcceptOutOfDescriptorsClosesTheWaitingConnectionAndHonoursTheDeadline) {
  EXPECT_EQ(in_child([] { return out_of_descriptors(true); }, std::chrono::seconds(10)), 0)
      << "-1: accept_until spun past its deadline";
}

TEST(OpenFiles, AcceptOutOfDescriptorsWithoutSpareHonoursTheDeadline) {
  EXPECT_EQ(in_child([] { return out_of_descriptors(false); }, std::chrono::seconds(10)), 0)
      << "-1: accept_until spun past its deadline";
}

TEST(OpenFiles, AcceptWithDescriptorsTakesTheConnection) {
  // The healthy twin: the same listener and client, no limit: the connection is accepted, nothing closed.
  const int rc = in_child(
      [] {
        std::string error;
        Fd listener = listen_on("127.0.0.1", 0, &error);
        SpareFd spare;
        if (connect_client(listener) < 0) return 11;
        std::string peer;
        Fd c = socket::accept_until(listener.get(), Clock::now() + std::chrono::seconds(2), &peer, &spare).fd;
        return c && spare.closed == 0 && peer.rfind("127.0.0.1:", 0) == 0 ? 0 : 14;
      },
      std::chrono::seconds(10));
  EXPECT_EQ(rc, 0);
}

TEST(OpenFiles, SoftLimitRaisedToTheHardLimit) {
  const int rc = in_child(
      [] {
        rlimit r{};
        ::getrlimit(RLIMIT_NOFILE, &r);
        if (r.rlim_max == RLIM_INFINITY || r.rlim_max < 256) return 0;  // nothing to show here
        const rlimit low{128, r.rlim_max};
        if (::setrlimit(RLIMIT_NOFILE, &low) != 0) return 12;
        const OpenFiles f = raise_open_files();
        ::getrlimit(RLIMIT_NOFILE, &r);
        if (f.soft != r.rlim_max || r.rlim_cur != r.rlim_max || f.hard != r.rlim_max) return 13;
        if (f.open < 3) return 14;  // stdin, stdout, stderr at least
        return connection_capacity(f) == f.soft - f.open - kOpenFilesReserve ? 0 : 15;
      },
      std::chrono::seconds(10));
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(connection_capacity({1024, 1024, 10}), 1024u - 10 - kOpenFilesReserve);
  EXPECT_EQ(connection_capacity({100, 100, 10}), 0u);
}

}  // namespace
}  // namespace railscope::preflight
