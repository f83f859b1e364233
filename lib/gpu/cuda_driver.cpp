// SPDX-License-Identifier: Apache-2.0
// The CUDA driver API through dlopen/dlsym. Function types are restated from the driver API
// (CUresult = int, CUdevice = int); no CUDA header is included.
#include "railscope/gpu/cuda_driver.h"

#include <dlfcn.h>

#include <cctype>
#include <cstdio>
#include <string_view>
#include <vector>

namespace railscope::gpu {
namespace {

using CuInit = int (*)(unsigned int);
using CuDriverGetVersion = int (*)(int*);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetAttribute = int (*)(int*, int, int);
using CuDeviceGetPciBusId = int (*)(char*, int, int);

template <typename F>
F symbol(void* handle, const char* name) {
  // POSIX guarantees data/function pointer conversion for dlsym results.
  return reinterpret_cast<F>(dlsym(handle, name));
}

}  // namespace

std::string normalize_bdf(std::string_view text) {
  // [domain:]bus:device.function, every field plain hex digits (no 0x, no sign).
  auto hex = [](std::string_view f, unsigned& out) {
    if (f.empty() || f.size() > 8) return false;
    out = 0;
    for (char c : f) {
      if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
      out = out * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(c))
                                                 ? c - '0'
                                                 : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
    }
    return true;
  };
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  auto dot = text.rfind('.');
  if (dot == std::string_view::npos || !hex(text.substr(dot + 1), fn)) return {};
  auto head = text.substr(0, dot);
  auto c2 = head.rfind(':');
  if (c2 == std::string_view::npos || !hex(head.substr(c2 + 1), dev)) return {};
  head = head.substr(0, c2);
  auto c1 = head.rfind(':');
  if (c1 == std::string_view::npos) {
    if (!hex(head, bus)) return {};
  } else if (!hex(head.substr(c1 + 1), bus) || !hex(head.substr(0, c1), domain)) {
    return {};
  }
  if (domain > 0xffff || bus > 0xff || dev > 0x1f || fn > 7) return {};
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
  return buf;
}

CudaDriverInfo query_cuda_driver(const std::string& library) {
  CudaDriverInfo info;
  void* handle = nullptr;
  std::string errors;
  std::vector<std::string> names;
  if (!library.empty())
    names.push_back(library);
  else
    names = {"libcuda.so.1", "libcuda.so"};
  for (const auto& name : names) {
    dlerror();
    handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      info.library = name;
      break;
    }
    const char* e = dlerror();
    if (!errors.empty()) errors += "; ";
    errors += e ? e : name + ": cannot open";
  }
  if (!handle) {
    info.error = "no CUDA driver (" + errors + ")";
    return info;
  }
  auto init = symbol<CuInit>(handle, "cuInit");
  auto get_version = symbol<CuDriverGetVersion>(handle, "cuDriverGetVersion");
  auto get_count = symbol<CuDeviceGetCount>(handle, "cuDeviceGetCount");
  auto get_device = symbol<CuDeviceGet>(handle, "cuDeviceGet");
  auto get_attr = symbol<CuDeviceGetAttribute>(handle, "cuDeviceGetAttribute");
  auto get_bus_id = symbol<CuDeviceGetPciBusId>(handle, "cuDeviceGetPCIBusId");
  if (!init || !get_version || !get_count || !get_device || !get_attr || !get_bus_id) {
    info.error = info.library + " lacks a driver API entry point (cuInit/cuDeviceGetAttribute/...)";
    return info;
  }
  if (int rc = get_version(&info.driver_version); rc != 0) info.driver_version = 0;
  if (int rc = init(0); rc != 0) {
    // 100 = CUDA_ERROR_NO_DEVICE, 999 = unknown (often: kernel module not loaded / version mismatch).
    info.error = "cuInit failed with CUresult " + std::to_string(rc) +
                 (rc == 100   ? " (no CUDA-capable device)"
                  : rc == 999 ? " (driver/kernel module mismatch?)"
                              : "");
    return info;
  }
  info.loaded = true;
  int count = 0;
  if (int rc = get_count(&count); rc != 0) {
    info.error = "cuDeviceGetCount failed with CUresult " + std::to_string(rc);
    return info;
  }
  for (int i = 0; i < count && i < 1024; ++i) {
    int dev = 0;
    if (get_device(&dev, i) != 0) continue;
    CudaGpu gpu;
    gpu.ordinal = i;
    char bus[64] = {};
    if (get_bus_id(bus, static_cast<int>(sizeof bus) - 1, dev) == 0) gpu.pci_bus_id = normalize_bdf(bus);
    auto attr = [&](int which) {
      int v = -1;
      return get_attr(&v, which, dev) == 0 ? v : -1;
    };
    gpu.cc_major = attr(kCuAttrComputeCapabilityMajor);
    gpu.cc_minor = attr(kCuAttrComputeCapabilityMinor);
    gpu.gdr_supported = attr(kCuAttrGpuDirectRdmaSupported);
    gpu.dmabuf_supported = attr(kCuAttrDmaBufSupported);
    info.gpus.push_back(std::move(gpu));
  }
  return info;
}

}  // namespace railscope::gpu
