// Every file railscope's GPUDirect checks read (sysfs, /proc, /boot) goes through a root prefix so
// tests can point them at a fake tree: RAILSCOPE_SYSFS_ROOT, or an explicit root given by the caller.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railscope::gpu {

class SysfsRoot {
 public:
  explicit SysfsRoot(std::string root = {}) : root_(std::move(root)) {}
  // RAILSCOPE_SYSFS_ROOT, or "" (the real "/").
  static SysfsRoot from_env();

  const std::string& root() const { return root_; }
  // The real path of an absolute system path such as "/sys/module/nvidia_peermem".
  std::string path(std::string_view absolute) const;
  bool exists(std::string_view absolute) const;
  // The file's text with trailing whitespace removed; nullopt when unreadable.
  std::optional<std::string> read_text(std::string_view absolute) const;
  // Up to max_bytes of a binary file; nullopt when unreadable.
  std::optional<std::vector<uint8_t>> read_bytes(std::string_view absolute, size_t max_bytes) const;
  // Names in a directory (no "." / ".."), sorted; empty when missing.
  std::vector<std::string> list_dir(std::string_view absolute) const;

 private:
  std::string root_;
};

}  // namespace railscope::gpu
