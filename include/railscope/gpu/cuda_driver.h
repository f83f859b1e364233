// SPDX-License-Identifier: Apache-2.0
// What the CUDA driver says about each GPU, read through dlopen("libcuda.so.1") only: railscope links
// no CUDA library and works unchanged on hosts without one ("no CUDA driver").
#pragma once

#include <string>
#include <vector>

namespace railscope::gpu {

// CUdevice_attribute values used (cuda.h, stable since they were introduced).
inline constexpr int kCuAttrComputeCapabilityMajor = 75;
inline constexpr int kCuAttrComputeCapabilityMinor = 76;
inline constexpr int kCuAttrGpuDirectRdmaSupported = 116;
inline constexpr int kCuAttrDmaBufSupported = 124;

struct CudaGpu {
  int ordinal = 0;
  std::string pci_bus_id;  // normalised to lower case "dddd:bb:dd.f"
  int cc_major = 0, cc_minor = 0;
  int gdr_supported = -1;     // CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, -1 = query failed
  int dmabuf_supported = -1;  // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, -1 = query failed
};

struct CudaDriverInfo {
  bool loaded = false;     // libcuda was found and cuInit succeeded
  std::string library;     // the name that was dlopen'ed
  std::string error;       // why not (dlopen error, missing symbol, cuInit code)
  int driver_version = 0;  // e.g. 13000 = 13.0
  std::vector<CudaGpu> gpus;
};

// dlopen()s `library` (default libcuda.so.1, then libcuda.so) and queries every device. Never throws;
// the library stays loaded for the process's lifetime (the driver does not support unloading well).
CudaDriverInfo query_cuda_driver(const std::string& library = {});

// "0000:1B:00.0" / "1b:00.0" → "0000:1b:00.0"; "" when it is not a PCI address.
std::string normalize_bdf(std::string_view text);

}  // namespace railscope::gpu
