// SPDX-License-Identifier: Apache-2.0
#include "railscope/core/safe_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace railscope::core {
namespace {

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string name_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// 0644 less the umask. umask() cannot be read without setting it (a race with other threads), so the
// value comes from /proc/self/status (Linux 4.7+); 022 when that line is missing.
mode_t file_mode() {
  mode_t mask = 022;
  if (std::FILE* f = std::fopen("/proc/self/status", "re")) {
    char line[256];
    while (std::fgets(line, sizeof line, f) != nullptr) {
      if (std::strncmp(line, "Umask:", 6) == 0) {
        mask = static_cast<mode_t>(std::strtoul(line + 6, nullptr, 8));
        break;
      }
    }
    std::fclose(f);
  }
  return 0644 & ~mask;
}

bool write_all(int fd, std::string_view s) {
  while (!s.empty()) {
    const ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    s.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// A unique file beside path, created O_EXCL (a name planted there is never opened) with `mode`;
// its name in *tmp. Hidden and without path's suffix, so a collector reading "*.prom" skips it.
int make_temp_beside(const std::string& path, std::string* tmp, std::string* error, mode_t mode) {
  if (std::string why = unsafe_output_folder(path); !why.empty()) {
    *error = why;
    return -1;
  }
  *tmp = folder_of(path) + "/." + name_of(path) + ".XXXXXX";
  const int fd = ::mkostemp(tmp->data(), O_CLOEXEC);
  if (fd < 0) {
    *error = fmt::format("cannot create a temporary file beside {}: {}", path, std::strerror(errno));
    return -1;
  }
  if (::fchmod(fd, mode) != 0) {
    *error = fmt::format("cannot set the mode of {}: {}", *tmp, std::strerror(errno));
    ::close(fd);
    ::unlink(tmp->c_str());
    return -1;
  }
  return fd;
}

}  // namespace

std::string unsafe_output_folder(const std::string& path) {
  const std::string dir = folder_of(path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return {};  // the open says why
  if ((st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0)
    return fmt::format(
        "folder {} is writable by every user and has no sticky bit, so another user could replace or "
        "remove {}; write to a folder of your own (or `chmod o-w` or `chmod +t` it)",
        dir, name_of(path));
  return {};
}

bool write_file_atomically(const std::string& path, std::string_view content, std::string* error) {
  return write_file_atomically(path, content, error, file_mode());
}

bool write_file_atomically(const std::string& path, std::string_view content, std::string* error,
                           unsigned mode) {
  std::string tmp;
  const int fd = make_temp_beside(path, &tmp, error, static_cast<mode_t>(mode));
  if (fd < 0) return false;
  bool ok = write_all(fd, content);
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = fmt::format("cannot rename {} to {}: {}", tmp, path, std::strerror(errno));
    ::unlink(tmp.c_str());
    return false;
  }
  if (!ok) {
    *error = fmt::format("cannot write {}: {}", path, std::strerror(err));
    ::unlink(tmp.c_str());
  }
  return ok;
}

bool can_write_atomically(const std::string& path, std::string* error) {
  std::string tmp;
  const int fd = make_temp_beside(path, &tmp, error, file_mode());
  if (fd < 0) return false;
  ::close(fd);
  ::unlink(tmp.c_str());
  return true;
}

int open_for_append(const std::string& path, std::string* error) {
  if (std::string why = unsafe_output_folder(path); !why.empty()) {
    *error = why;
    return -1;
  }
  // O_NONBLOCK: a FIFO planted at the name would otherwise block the open until someone reads it.
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, file_mode());
  if (fd < 0) {
    struct stat lst {};
    if (errno == ELOOP && ::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode))
      *error =
          fmt::format("{} is a symbolic link; not followed (it could lead to another file of yours)", path);
    else
      *error = fmt::format("cannot open {}: {}", path, std::strerror(errno));
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *error = fmt::format("{} is not a regular file", path);
  } else if (st.st_uid != ::geteuid()) {
    *error = fmt::format("{} belongs to another user (uid {}); not appended to", path, st.st_uid);
  } else if (::fcntl(fd, F_SETFL, O_APPEND) != 0) {
    *error = fmt::format("cannot open {}: {}", path, std::strerror(errno));
  } else {
    return fd;
  }
  ::close(fd);
  return -1;
}

}  // namespace railscope::core
