// SPDX-License-Identifier: Apache-2.0
// Linked into each plugin when libstdc++ is linked statically (RAILSCOPE_STATIC_RUNTIME,
// cmake/RailscopePlugin.cmake).
//
// GCC 12's libstdc++.a, built on glibc >= 2.36, calls arc4random() from std::random_device (random.o,
// which every plugin pulls in through libstdc++'s own string and exception objects). Bound to glibc,
// that one reference makes each plugin need GLIBC_2.36 (Debian 12, Ubuntu 22.10+) where everything else
// it calls needs at most GLIBC_2.34 — and Ubuntu 22.04 based training images have glibc 2.35. This
// hidden definition satisfies the reference inside the plugin instead (the linker prefers a definition
// already in the output over a shared library's), with getrandom(2) (glibc 2.25, Linux 3.17), so the
// plugin needs what the rest of its code needs. tests/install checks the highest GLIBC_ version each
// .so needs against docs/compatibility.md.
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <ctime>

namespace {

bool fill_from_urandom(void* out, size_t size) {
  const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  auto* p = static_cast<unsigned char*>(out);
  size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, p + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  return got == size;
}

}  // namespace

extern "C" __attribute__((visibility("hidden"))) uint32_t arc4random(void) noexcept {
  uint32_t value = 0;
  for (;;) {
    const ssize_t n = ::getrandom(&value, sizeof value, 0);
    if (n == static_cast<ssize_t>(sizeof value)) return value;
    if (n < 0 && errno == EINTR) continue;
    break;  // ENOSYS (kernel < 3.17) or a short read: try the device
  }
  if (fill_from_urandom(&value, sizeof value)) return value;
  // glibc's arc4random aborts here; a plugin must not. Not cryptographic: std::random_device only
  // seeds railscope's connection ids with it, and they are checked, not trusted.
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint32_t>(ts.tv_nsec) ^ static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&value));
}
