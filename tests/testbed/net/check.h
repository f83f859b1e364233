// SPDX-License-Identifier: Apache-2.0
// The test-bed net programs' assertion: counts a failure, says where and why, and goes on (so one run
// reports every broken expectation). main() returns g_failures == 0 ? 0 : 1.
#pragma once

#include <cstdio>

inline int g_failures = 0;

#define CHECK(cond, ...)                                        \
  do {                                                          \
    if (!(cond)) {                                              \
      std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                        \
      std::fprintf(stderr, "\n");                               \
      ++g_failures;                                             \
    }                                                           \
  } while (0)
