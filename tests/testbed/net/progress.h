// SPDX-License-Identifier: Apache-2.0
// The test-bed net programs' way to wait for requests: every one is tested, round robin, until all
// are done, as NCCL's proxy thread does. Under the eager protocol a large send needs its receive to be
// progressed (to answer its request-to-send), so one process holding both ends must not wait on one
// side alone.
#pragma once

#include <chrono>
#include <cstdio>
#include <utility>
#include <vector>

#include "railscope/nccl/net.h"

// reqs: (request, where test() writes its sizes). `ahead`: requests tested in every round too that
// must not complete meanwhile (a receive posted ahead of its send, which makes its comm read what the
// sender says out of band). False, with a line on stderr naming `what`, when a test() fails, a request
// ahead completes, or the requests are not all done within `limit`.
inline bool wait_all(const ncclNet_v11_t* t, const std::vector<std::pair<void*, int*>>& reqs,
                     const char* what, std::chrono::seconds limit = std::chrono::seconds(90),
                     const std::vector<void*>& ahead = {}) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<int> done(reqs.size(), 0);
  for (size_t left = reqs.size(); left > 0;) {
    for (size_t i = 0; i < reqs.size(); ++i) {
      if (done[i]) continue;
      if (t->test(reqs[i].first, &done[i], reqs[i].second) != ncclSuccess) {
        std::fprintf(stderr, "%s: test of request %zu failed\n", what, i);
        return false;
      }
      if (done[i]) --left;
    }
    for (void* r : ahead) {
      int early = 0, size = 0;
      if (t->test(r, &early, &size) != ncclSuccess || early != 0) {
        std::fprintf(stderr, "%s: a receive posted ahead failed or completed before its send\n", what);
        return false;
      }
    }
    if (left > 0 && std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "%s: %zu of %zu requests not done within %lld s\n", what, left, reqs.size(),
                   static_cast<long long>(limit.count()));
      return false;
    }
  }
  return true;
}
