// SPDX-License-Identifier: Apache-2.0
// What the host offers GPUDirect RDMA, independent of any GPU/NIC pair: a peer-memory client
// (nvidia-peermem / legacy nv_peer_mem), kernel DMA-BUF support for RDMA, and the IOMMU mode.
// All reads go through a SysfsRoot.
#pragma once

#include <string>
#include <vector>

#include "railscope/gpu/sysfs_root.h"

namespace railscope::gpu {

struct PeerMemoryStatus {
  bool nvidia_peermem_module = false;   // /sys/module/nvidia_peermem
  bool nv_peer_mem_module = false;      // /sys/module/nv_peer_mem (legacy Mellanox module)
  bool memory_peers_nv_mem = false;     // /sys/kernel/mm/memory_peers/nv_mem/version (MLNX_OFED peer API)
  bool memory_peers_nv_mem_nc = false;  // /sys/kernel/mm/memory_peers/nv_mem_nc/version
  std::string version;                  // first version file found
  // NCCL's test (2.28): any of nv_mem/version, nv_mem_nc/version, nvidia_peermem/version exists.
  bool loaded = false;
  std::string evidence;  // what was found, for the report
};
PeerMemoryStatus detect_peer_memory(const SysfsRoot& fs);

// Kernel side of DMA-BUF for RDMA. What is checked, in order:
//  - the kernel release (/proc/sys/kernel/osrelease): ib_uverbs gained dma-buf MR registration in 5.12;
//  - /boot/config-<release> when readable: CONFIG_DMA_SHARED_BUFFER must be y (absent file = unknown).
// The final word belongs to ibv_reg_dmabuf_mr (see verbs_dmabuf_probe.h), which needs a device.
struct KernelDmabufStatus {
  std::string release;  // "" when unreadable
  int major = 0, minor = 0;
  bool release_ok = false;            // >= 5.12
  int config_dma_shared_buffer = -1;  // 1 = y, 0 = not set, -1 = config not readable
  bool supported = false;
  std::string evidence;
};
KernelDmabufStatus detect_kernel_dmabuf(const SysfsRoot& fs);

enum class IommuMode { None, Passthrough, Translated, Unknown };
std::string_view to_string(IommuMode m);
struct IommuStatus {
  IommuMode mode = IommuMode::Unknown;
  std::vector<std::string> units;  // /sys/class/iommu entries
  int groups = 0;                  // entries in /sys/kernel/iommu_groups
  std::string cmdline_flags;       // iommu=..., intel_iommu=..., amd_iommu=... from /proc/cmdline
  std::string evidence;
};
IommuStatus detect_iommu(const SysfsRoot& fs);
// The per-device default domain type (/sys/bus/pci/devices/<bdf>/iommu_group/type): "identity",
// "DMA", "DMA-FQ"...; "" when absent.
std::string device_iommu_domain(const SysfsRoot& fs, const std::string& bdf);

}  // namespace railscope::gpu
