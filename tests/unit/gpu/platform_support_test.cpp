// SPDX-License-Identifier: Apache-2.0
// Peer-memory client, kernel DMA-BUF and IOMMU detection over a fake sysfs root.
#include <gtest/gtest.h>

#include <cstdlib>

#include "fake_sysfs.h"
#include "railscope/gpu/platform_support.h"

namespace railscope::gpu {
namespace {

using testing::FakeSysfs;

TEST(PeerMemory, NothingLoaded) {
  FakeSysfs fs;
  auto st = detect_peer_memory(SysfsRoot(fs.sys()));
  EXPECT_FALSE(st.loaded);
  EXPECT_NE(st.evidence.find("no /sys/module/nvidia_peermem"), std::string::npos) << st.evidence;
}

TEST(PeerMemory, NvidiaPeermem) {
  FakeSysfs fs;
  fs.load_nvidia_peermem();
  auto st = detect_peer_memory(SysfsRoot(fs.sys()));
  EXPECT_TRUE(st.loaded);
  EXPECT_TRUE(st.nvidia_peermem_module);
  EXPECT_EQ(st.version, "550.54.15");
  EXPECT_EQ(st.evidence, "nvidia_peermem loaded; version 550.54.15");
}

TEST(PeerMemory, LegacyNvPeerMemThroughMemoryPeers) {
  FakeSysfs fs;
  fs.mkdir("/sys/module/nv_peer_mem");
  fs.write("/sys/kernel/mm/memory_peers/nv_mem/version", "1.3-0\n");
  auto st = detect_peer_memory(SysfsRoot(fs.sys()));
  EXPECT_TRUE(st.loaded);
  EXPECT_TRUE(st.nv_peer_mem_module);
  EXPECT_TRUE(st.memory_peers_nv_mem);
  EXPECT_EQ(st.evidence, "nv_peer_mem loaded; memory_peers/nv_mem registered; version 1.3-0");
}

TEST(PeerMemory, NcVariantCounts) {
  FakeSysfs fs;
  fs.write("/sys/kernel/mm/memory_peers/nv_mem_nc/version", "1.0\n");
  EXPECT_TRUE(detect_peer_memory(SysfsRoot(fs.sys())).loaded);
}

TEST(PeerMemory, ModuleDirectoryWithoutVersionIsNotEnough) {
  // NCCL looks for the version files; a half-initialised module is flagged, not trusted.
  FakeSysfs fs;
  fs.mkdir("/sys/module/nvidia_peermem");
  auto st = detect_peer_memory(SysfsRoot(fs.sys()));
  EXPECT_FALSE(st.loaded);
  EXPECT_NE(st.evidence.find("no version file"), std::string::npos) << st.evidence;
}

TEST(SysfsRootPaths, RealAndFakeTrees) {
  SysfsRoot real;
  EXPECT_TRUE(real.is_real());
  EXPECT_EQ(real.path("/sys/module/nvidia_peermem"), "/sys/module/nvidia_peermem");
  EXPECT_EQ(real.path("/proc/cmdline"), "/proc/cmdline");
  SysfsRoot fake("/tmp/x/sys/");  // lib/node's meaning: the directory that stands for /sys
  EXPECT_EQ(fake.root(), "/tmp/x/sys");
  EXPECT_EQ(fake.path("/sys/bus/pci/devices/0000:02:00.0/config"),
            "/tmp/x/sys/bus/pci/devices/0000:02:00.0/config");
  EXPECT_EQ(fake.path("/proc/sys/kernel/osrelease"), "/tmp/x/proc/sys/kernel/osrelease");
  EXPECT_EQ(fake.path("/boot/config-6.1.0"), "/tmp/x/boot/config-6.1.0");
}

TEST(PeerMemory, RootFromEnvironment) {
  FakeSysfs fs;
  fs.load_nvidia_peermem();
  setenv("RAILSCOPE_SYSFS_ROOT", fs.sys().c_str(), 1);
  EXPECT_TRUE(detect_peer_memory(SysfsRoot::from_env()).loaded);
  unsetenv("RAILSCOPE_SYSFS_ROOT");
  EXPECT_EQ(SysfsRoot::from_env().root(), "/sys");
}

TEST(KernelDmabuf, ModernKernelWithConfig) {
  FakeSysfs fs;
  fs.kernel("6.1.0-18-amd64");
  fs.write("/boot/config-6.1.0-18-amd64", "CONFIG_X=y\nCONFIG_DMA_SHARED_BUFFER=y\n");
  auto st = detect_kernel_dmabuf(SysfsRoot(fs.sys()));
  EXPECT_TRUE(st.supported);
  EXPECT_EQ(st.major, 6);
  EXPECT_EQ(st.minor, 1);
  EXPECT_EQ(st.evidence, "kernel 6.1.0-18-amd64 (>= 5.12); CONFIG_DMA_SHARED_BUFFER=y");
}

TEST(KernelDmabuf, OldKernel) {
  FakeSysfs fs;
  fs.kernel("5.4.0-150-generic");
  auto st = detect_kernel_dmabuf(SysfsRoot(fs.sys()));
  EXPECT_FALSE(st.supported);
  EXPECT_EQ(st.evidence, "kernel 5.4.0-150-generic (< 5.12: no dma-buf MRs)");
}

TEST(KernelDmabuf, ConfigWithoutDmaBuf) {
  FakeSysfs fs;
  fs.kernel("5.15.0");
  fs.write("/boot/config-5.15.0", "# CONFIG_DMA_SHARED_BUFFER is not set\n");
  auto st = detect_kernel_dmabuf(SysfsRoot(fs.sys()));
  EXPECT_FALSE(st.supported);
  EXPECT_EQ(st.config_dma_shared_buffer, 0);
}

TEST(KernelDmabuf, NoConfigFileTrustsTheRelease) {
  FakeSysfs fs;
  fs.kernel("5.12.0");
  auto st = detect_kernel_dmabuf(SysfsRoot(fs.sys()));
  EXPECT_TRUE(st.supported);
  EXPECT_EQ(st.config_dma_shared_buffer, -1);
}

TEST(KernelDmabuf, UnreadableRelease) {
  FakeSysfs fs;
  auto st = detect_kernel_dmabuf(SysfsRoot(fs.sys()));
  EXPECT_FALSE(st.supported);
  EXPECT_EQ(st.evidence, "kernel release unreadable");
}

TEST(Iommu, Off) {
  FakeSysfs fs;
  auto st = detect_iommu(SysfsRoot(fs.sys()));
  EXPECT_EQ(st.mode, IommuMode::None);
}

TEST(Iommu, PassthroughFromGroupTypes) {
  FakeSysfs fs;
  fs.mkdir("/sys/class/iommu/dmar0");
  fs.write("/sys/kernel/iommu_groups/0/type", "identity\n");
  fs.write("/sys/kernel/iommu_groups/1/type", "identity\n");
  fs.write("/proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_iommu=on iommu=pt quiet\n");
  auto st = detect_iommu(SysfsRoot(fs.sys()));
  EXPECT_EQ(st.mode, IommuMode::Passthrough);
  EXPECT_EQ(st.cmdline_flags, "intel_iommu=on iommu=pt");
  EXPECT_EQ(st.groups, 2);
  EXPECT_EQ(st.evidence,
            "2 iommu group(s) in identity (passthrough) mode (cmdline: intel_iommu=on iommu=pt)");
}

TEST(Iommu, Translated) {
  FakeSysfs fs;
  fs.mkdir("/sys/class/iommu/ivhd0");
  fs.write("/sys/kernel/iommu_groups/3/type", "DMA-FQ\n");
  fs.write("/sys/bus/pci/devices/0000:03:00.0/iommu_group/type", "DMA-FQ\n");
  auto st = detect_iommu(SysfsRoot(fs.sys()));
  EXPECT_EQ(st.mode, IommuMode::Translated);
  EXPECT_EQ(device_iommu_domain(SysfsRoot(fs.sys()), "0000:03:00.0"), "DMA-FQ");
  EXPECT_EQ(device_iommu_domain(SysfsRoot(fs.sys()), "0000:04:00.0"), "");
}

}  // namespace
}  // namespace railscope::gpu
