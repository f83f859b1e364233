// SPDX-License-Identifier: Apache-2.0
// Test helpers for the socket layer: a connected pair of stream sockets, and a call that must return
// within a bound (a check that is missing would otherwise hang the test instead of failing it).
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>

#include "railscope/socket/fd.h"

namespace railscope::socket::testing {

struct SocketPair {
  Fd a, b;
  SocketPair() {
    int fds[2] = {-1, -1};
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    a.reset(fds[0]);
    b.reset(fds[1]);
  }
};

// Runs f; a call still running after `limit` ends the test binary with a failure (it cannot be stopped).
template <class F>
auto within(std::chrono::milliseconds limit, F f) {
  auto result = std::async(std::launch::async, std::move(f));
  if (result.wait_for(limit) != std::future_status::ready) {
    std::fprintf(stderr, "FAILED: the call did not return within %lld ms\n",
                 static_cast<long long>(limit.count()));
    std::_Exit(1);
  }
  return result.get();
}

}  // namespace railscope::socket::testing
