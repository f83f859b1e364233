// SPDX-License-Identifier: Apache-2.0
// The open-file limit rank 0 runs under (see open_files.h).
#include "open_files.h"

#include <dirent.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace railscope::preflight {
namespace {

uint64_t as_u64(rlim_t v) { return v == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(v); }

size_t count_open() {
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return 0;
  size_t n = 0;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n > 0 ? n - 1 : 0;  // not the directory's own descriptor
}

// The most a process may open (fs.nr_open): a hard limit of "unlimited" cannot be the soft limit.
rlim_t nr_open() {
  std::FILE* f = std::fopen("/proc/sys/fs/nr_open", "r");
  unsigned long long n = 0;
  if (f) {
    if (std::fscanf(f, "%llu", &n) != 1) n = 0;
    std::fclose(f);
  }
  return n > 0 ? static_cast<rlim_t>(n) : rlim_t(1) << 20;
}

}  // namespace

OpenFiles raise_open_files() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != r.rlim_max) {
    rlimit up = r;
    up.rlim_cur = r.rlim_max == RLIM_INFINITY ? nr_open() : r.rlim_max;
    if (up.rlim_cur > r.rlim_cur && ::setrlimit(RLIMIT_NOFILE, &up) == 0) r = up;
  }
  return {as_u64(r.rlim_cur), as_u64(r.rlim_max), count_open()};
}

size_t connection_capacity(const OpenFiles& f) {
  const uint64_t used = f.open + kOpenFilesReserve;
  return f.soft > used ? static_cast<size_t>(std::min<uint64_t>(f.soft - used, SIZE_MAX)) : 0;
}

}  // namespace railscope::preflight
