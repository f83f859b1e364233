// SPDX-License-Identifier: Apache-2.0
// The GPUDirect RDMA decision for one (GPU, NIC) pair, from facts gathered elsewhere (topology,
// sysfs, CUDA driver, verbs probe). Pure: no I/O, so every rule is unit-tested. Mirrors NCCL 2.28's
// ncclTopoCheckGdr and the IB transport's ptrSupport, plus the checks NCCL does not make (ACS,
// IOMMU) that explain silent slowdowns and local-protection errors.
#pragma once

#include <string>
#include <vector>

#include "railscope/core/diagnosis.h"
#include "railscope/gpu/path_type.h"
#include "railscope/gpu/pcie_acs.h"
#include "railscope/gpu/platform_support.h"
#include "railscope/gpu/ptr_support.h"
#include "railscope/gpu/verbs_gdr.h"

namespace railscope::gpu {

struct GdrPolicy {
  GdrLevel level;             // NCCL_NET_GDR_LEVEL
  int gdr_read = -2;          // NCCL_NET_GDR_READ: -2 default (on for compute capability >= 8.0), 0 off, 1 on
  bool dmabuf_enable = true;  // NCCL_DMABUF_ENABLE
  static GdrPolicy from_env();
};

struct PlatformFacts {
  PeerMemoryStatus peer;
  KernelDmabufStatus kernel_dmabuf;
  IommuStatus iommu;
};

struct GpuFacts {
  std::string label;  // "GPU0"
  std::string bdf;
  int cc_major = -1, cc_minor = -1;  // -1: no CUDA driver to ask
  int gdr_supported = -1;            // CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED
  int dmabuf_supported = -1;         // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
  std::string iommu_domain;          // iommu_group/type of the GPU, "" unknown
};

struct NicFacts {
  std::string name;
  std::string bdf;
  DmabufProbe verbs_dmabuf = DmabufProbe::Unknown;  // from probe_verbs_dmabuf on this NIC
};

struct PortAcs {
  std::string bdf;
  AcsStatus acs;
};

struct PairFacts {
  PciPath path;
  std::vector<PortAcs> acs;  // one per path.switch_ports entry
  std::string nearer_gpus;   // GPUs within the GDR level of this NIC ("GPU2, GPU3"), for the fix text
};

struct PairDecision {
  std::string gpu, nic;
  PathType path = PathType::Sys;
  std::string via;
  bool distance_ok = false;
  bool acs_redirect = false;
  bool cuda_ptr = false;    // NCCL_PTR_CUDA: peer memory usable on this pair
  bool dmabuf_ptr = false;  // NCCL_PTR_DMABUF usable on this pair
  int ptr_support = kPtrHost;
  bool gdr = false;                     // GPUDirect RDMA for receives (NIC writes GPU memory)
  bool gdr_read = false;                // ... and for sends (NIC reads GPU memory)
  std::vector<diag::Finding> findings;  // every reason something is off, most important first
  std::string cell() const;             // "PIX gdr cuda+dmabuf" / "SYS off (distance)"
};

PairDecision decide_pair(const GdrPolicy& policy, const PlatformFacts& platform, const GpuFacts& gpu,
                         const NicFacts& nic, const PairFacts& pair);

// What getProperties should report for a NIC: HOST plus the bits some GPU pair allows. A NIC that
// is not a PCI device (soft-RoCE rxe, other virtual devices) gets HOST only. With no GPU pair known
// (no topology, no GPU visible) the platform's capability is reported and NCCL's own distance
// check decides, as NCCL's IB transport does.
int nic_ptr_support(const std::vector<PairDecision>& pairs, const std::string& nic, bool pci_device,
                    const PlatformFacts& platform, DmabufProbe verbs_dmabuf, const GdrPolicy& policy);

}  // namespace railscope::gpu
