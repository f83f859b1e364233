// SPDX-License-Identifier: Apache-2.0
// Rank 0 holds up to kMaxHeldCallers (rank0_desk.h) rank connections open at once, beside its own
// descriptors; the common soft limit (1,024) leaves less room than the hard limit, so the soft limit is
// raised to the hard limit at start, and rank 0 holds no more connections than fit instead of running
// into EMFILE.
#pragma once

#include <cstddef>
#include <cstdint>

namespace railscope::preflight {

struct OpenFiles {
  uint64_t soft = 0;  // RLIMIT_NOFILE after raising (RLIM_INFINITY as UINT64_MAX)
  uint64_t hard = 0;
  size_t open = 0;  // descriptors open now
};

// Raises RLIMIT_NOFILE's soft limit to its hard limit (a failure keeps the old limit) and returns the
// limits and the descriptors open now.
OpenFiles raise_open_files();

// Descriptors rank 0 needs beside its ranks' connections: the listening socket and its spare, the
// pipes of a step's netbench children (at most one per rail), the HTML page, what libraries open.
constexpr size_t kOpenFilesReserve = 160;

// How many ranks' connections fit next to `f.open` and the reserve.
size_t connection_capacity(const OpenFiles& f);

}  // namespace railscope::preflight
