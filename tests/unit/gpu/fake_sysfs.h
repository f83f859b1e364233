// SPDX-License-Identifier: Apache-2.0
// A throw-away directory tree standing in for /sys, /proc and /boot (RAILSCOPE_SYSFS_ROOT), plus
// PCI config-space images with or without an ACS capability.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace railscope::gpu::testing {

class FakeSysfs {
 public:
  FakeSysfs() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "railscope-sysfs-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    root_ = tmpl;
  }
  ~FakeSysfs() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;

  const std::string& root() const { return root_; }
  // The directory to give as RAILSCOPE_SYSFS_ROOT / SysfsRoot (it stands for /sys).
  std::string sys() const { return root_ + "/sys"; }

  void write(const std::string& absolute, const std::string& text) const {
    auto p = std::filesystem::path(root_ + absolute);
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  void write_bytes(const std::string& absolute, const std::vector<uint8_t>& bytes) const {
    auto p = std::filesystem::path(root_ + absolute);
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  void mkdir(const std::string& absolute) const { std::filesystem::create_directories(root_ + absolute); }

  // nvidia-peermem as a modern driver stack shows it.
  void load_nvidia_peermem() const { write("/sys/module/nvidia_peermem/version", "550.54.15\n"); }
  void kernel(const std::string& release) const { write("/proc/sys/kernel/osrelease", release + "\n"); }

  // A 4 KiB config space: AER at 0x100 → ACS at 0x148 (control = acs_ctrl), or AER only when
  // with_acs is false. truncated = only the 64-byte header an unprivileged reader gets.
  static std::vector<uint8_t> config_space(bool with_acs, uint16_t acs_ctrl, bool truncated = false) {
    std::vector<uint8_t> c(truncated ? 64 : 4096, 0);
    c[0] = 0xb5;  // vendor 0x10b5 (PLX)
    c[1] = 0x10;
    if (truncated) return c;
    auto put32 = [&](size_t off, uint32_t v) {
      for (int i = 0; i < 4; ++i) c[off + static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
    };
    uint32_t next = with_acs ? 0x148u : 0u;
    put32(0x100, 0x0001u | (1u << 16) | (next << 20));  // AER, version 1
    if (with_acs) {
      put32(0x148, 0x000Du | (1u << 16));  // ACS, version 1, last
      c[0x14c] = 0x5f;                     // capability: SV TB RR CR UF DT
      c[0x14e] = static_cast<uint8_t>(acs_ctrl & 0xff);
      c[0x14f] = static_cast<uint8_t>(acs_ctrl >> 8);
    }
    return c;
  }
  void pci_config(const std::string& bdf, const std::vector<uint8_t>& bytes) const {
    write_bytes("/sys/bus/pci/devices/" + bdf + "/config", bytes);
  }

 private:
  std::string root_;
};

inline std::string fixture(const std::string& name) {
  return std::string(RAILSCOPE_GPU_FIXTURES) + "/" + name;
}

}  // namespace railscope::gpu::testing
