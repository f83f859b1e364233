// SPDX-License-Identifier: Apache-2.0
// Sysfs reads through a configurable root; every failure reads as "nothing".
#include "railscope/node/sysfs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>

#include "railscope/core/params.h"

namespace railscope::node {

Sysfs::Sysfs(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  if (root_.empty()) root_ = "/sys";
}

std::string Sysfs::default_root() {
  std::string r = params::get_string("RAILSCOPE_SYSFS_ROOT");
  return r.empty() ? "/sys" : r;
}

std::string Sysfs::path(std::string_view rel) const {
  std::string p = root_;
  if (!rel.starts_with('/')) p += '/';
  p += rel;
  return p;
}

std::optional<std::string> Sysfs::read(std::string_view rel) const {
  const std::string p = path(rel);
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[4096];
  size_t got = 0;
  bool failed = false;
  while (got < sizeof buf) {
    const ssize_t n = ::read(fd, buf + got, sizeof buf - got);
    if (n < 0) {
      failed = true;  // EINVAL for masked GID attributes, EISDIR, EIO ...
      break;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (failed) return std::nullopt;
  std::string s(buf, got);
  while (!s.empty() && (std::isspace(static_cast<unsigned char>(s.back())) || s.back() == '\0')) s.pop_back();
  return s;
}

std::optional<int64_t> parse_leading_int(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  text.remove_prefix(i);
  int base = 10;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    base = 16;
    text.remove_prefix(2);
  }
  int64_t v = 0;
  size_t n = 0;
  for (; n < text.size(); ++n) {
    const char c = text[n];
    int d = -1;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    if (d < 0) break;
    if (v > (INT64_MAX - d) / base) return std::nullopt;
    v = v * base + d;
  }
  if (n == 0) return std::nullopt;
  const std::string_view rest = text.substr(n);
  // Accept "4: ACTIVE" and bare numbers; reject "12abc".
  if (!rest.empty() && rest.front() != ':' && !std::isspace(static_cast<unsigned char>(rest.front())))
    return std::nullopt;
  return v;
}

std::optional<int64_t> Sysfs::read_int(std::string_view rel) const {
  auto s = read(rel);
  if (!s) return std::nullopt;
  return parse_leading_int(*s);
}

std::vector<std::string> Sysfs::list(std::string_view rel) const {
  std::vector<std::string> out;
  DIR* d = ::opendir(path(rel).c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool Sysfs::exists(std::string_view rel) const {
  struct stat st {};
  return ::stat(path(rel).c_str(), &st) == 0;
}

std::optional<std::string> Sysfs::resolve(std::string_view rel) const {
  char buf[PATH_MAX];
  if (::realpath(path(rel).c_str(), buf) == nullptr) return std::nullopt;
  std::string p = buf;
  if (root_ != "/sys" && root_ != "/") {
    char rootbuf[PATH_MAX];
    if (::realpath(root_.c_str(), rootbuf) != nullptr) {
      const std::string r = rootbuf;
      if (p.starts_with(r + "/")) p = "/sys" + p.substr(r.size());  // report it as the node would see it
    }
  }
  return p;
}

std::optional<std::string> Sysfs::resolve_relative(std::string_view rel) const {
  char buf[PATH_MAX], rootbuf[PATH_MAX];
  if (::realpath(path(rel).c_str(), buf) == nullptr || ::realpath(root_.c_str(), rootbuf) == nullptr)
    return std::nullopt;
  const std::string p = buf, r = rootbuf;
  if (r == "/") return p.size() > 1 ? std::optional(p.substr(1)) : std::nullopt;
  if (!p.starts_with(r + "/")) return std::nullopt;
  return p.substr(r.size() + 1);
}

}  // namespace railscope::node
