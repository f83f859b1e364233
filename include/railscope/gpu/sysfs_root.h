// SPDX-License-Identifier: Apache-2.0
// Every file railscope's GPUDirect checks read goes through one root so tests can point them at a
// fake tree. The root is the sysfs directory (RAILSCOPE_SYSFS_ROOT, default /sys, the same variable
// and meaning as lib/node's). With a fake root DIR/sys, the few non-sysfs files (/proc/cmdline,
// /proc/sys/kernel/osrelease, /boot/config-*) are read from DIR/proc and DIR/boot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railscope::gpu {

class SysfsRoot {
 public:
  explicit SysfsRoot(std::string sysfs_dir = "/sys");
  // RAILSCOPE_SYSFS_ROOT, or /sys.
  static SysfsRoot from_env();

  const std::string& root() const { return root_; }  // the sysfs directory
  bool is_real() const { return root_ == "/sys"; }
  // The file to open for an absolute system path such as "/sys/module/nvidia_peermem" or "/proc/cmdline".
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
