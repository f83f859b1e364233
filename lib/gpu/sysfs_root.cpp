// SPDX-License-Identifier: Apache-2.0
// File access below a root prefix, without exceptions (sysfs files vanish and deny access).
#include "railscope/gpu/sysfs_root.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "railscope/core/params.h"

namespace railscope::gpu {

SysfsRoot::SysfsRoot(std::string sysfs_dir) : root_(std::move(sysfs_dir)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  if (root_.empty()) root_ = "/sys";
}

SysfsRoot SysfsRoot::from_env() { return SysfsRoot(params::raw("RAILSCOPE_SYSFS_ROOT").value_or("/sys")); }

std::string SysfsRoot::path(std::string_view absolute) const {
  std::string rel(absolute);
  if (rel.empty() || rel.front() != '/') rel.insert(rel.begin(), '/');
  if (rel == "/sys" || rel.rfind("/sys/", 0) == 0) return root_ + rel.substr(4);
  if (is_real()) return rel;
  // A fake tree: siblings of its sys directory stand for /proc, /boot.
  auto slash = root_.find_last_of('/');
  std::string parent = slash == std::string::npos ? std::string(".") : root_.substr(0, slash);
  return parent + rel;
}

bool SysfsRoot::exists(std::string_view absolute) const {
  std::error_code ec;
  return std::filesystem::exists(path(absolute), ec);
}

std::optional<std::string> SysfsRoot::read_text(std::string_view absolute) const {
  std::ifstream in(path(absolute), std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  char buf[4096];
  while (text.size() < (1u << 20)) {  // sysfs attributes are small; never read unbounded
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (!in) break;
  }
  if (in.bad()) return std::nullopt;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t' ||
                           text.back() == '\r' || text.back() == '\0'))
    text.pop_back();
  return text;
}

std::optional<std::vector<uint8_t>> SysfsRoot::read_bytes(std::string_view absolute, size_t max_bytes) const {
  std::ifstream in(path(absolute), std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<uint8_t> out(max_bytes);
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(max_bytes));
  if (in.bad()) return std::nullopt;
  out.resize(static_cast<size_t>(in.gcount()));
  return out;
}

std::vector<std::string> SysfsRoot::list_dir(std::string_view absolute) const {
  std::vector<std::string> names;
  std::error_code ec;
  std::filesystem::directory_iterator it(path(absolute), ec), end;
  for (; !ec && it != end; it.increment(ec)) names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace railscope::gpu
