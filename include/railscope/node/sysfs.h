// SPDX-License-Identifier: Apache-2.0
// Reading sysfs through a configurable root, so tests can point it at a fake tree.
// Every read tolerates missing files, empty files, garbage and read errors (EINVAL from
// container-masked GID attributes): the result is "nothing", never an exception or a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railscope::node {

class Sysfs {
 public:
  explicit Sysfs(std::string root);
  // RAILSCOPE_SYSFS_ROOT when set, else "/sys".
  static std::string default_root();

  const std::string& root() const { return root_; }
  bool is_real() const { return root_ == "/sys"; }
  std::string path(std::string_view rel) const;

  // File content with trailing whitespace/newlines removed; nullopt when missing or unreadable.
  // Reads at most 4 KiB.
  std::optional<std::string> read(std::string_view rel) const;
  // A whole decimal (or 0x hex) integer, optionally followed by ": text" (sysfs "4: ACTIVE").
  std::optional<int64_t> read_int(std::string_view rel) const;
  // Entry names of a directory, sorted; empty when missing.
  std::vector<std::string> list(std::string_view rel) const;
  bool exists(std::string_view rel) const;
  // Canonical path of rel (symlinks resolved), relative to the root when it lies inside it.
  std::optional<std::string> resolve(std::string_view rel) const;
  // The same, relative to the root ("devices/pci0000:00/0000:00:01.0/0000:17:00.0"), for reading further
  // through this Sysfs; nullopt when it lies outside the root.
  std::optional<std::string> resolve_relative(std::string_view rel) const;

 private:
  std::string root_;
};

// Leading integer of "4: ACTIVE" / "1500" / "0x15b3"; nullopt on garbage.
std::optional<int64_t> parse_leading_int(std::string_view text);

}  // namespace railscope::node
