// SPDX-License-Identifier: Apache-2.0
// A fake CUDA driver exporting the six driver-API entry points railscope resolves with dlsym.
// Behaviour comes from the environment so one loaded copy serves every test:
//   FAKE_CUDA_INIT      cuInit's return code (default 0)
//   FAKE_CUDA_BUSIDS    comma-separated PCI bus ids, one per device (default: none)
//   FAKE_CUDA_DMABUF    value of attribute 124 (default 1); FAKE_CUDA_GDR: attribute 116 (default 1)
//   FAKE_CUDA_CC        compute capability as "major.minor" (default 9.0)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

int env_int(const char* name, int def) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : def;
}

std::vector<std::string> bus_ids() {
  std::vector<std::string> out;
  const char* v = std::getenv("FAKE_CUDA_BUSIDS");
  if (!v) return out;
  std::string s(v);
  size_t start = 0;
  while (start < s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

}  // namespace

FAKE_EXPORT int cuInit(unsigned int) { return env_int("FAKE_CUDA_INIT", 0); }
FAKE_EXPORT int cuDriverGetVersion(int* v) {
  *v = 13000;
  return 0;
}
FAKE_EXPORT int cuDeviceGetCount(int* n) {
  *n = static_cast<int>(bus_ids().size());
  return 0;
}
FAKE_EXPORT int cuDeviceGet(int* dev, int ordinal) {
  if (ordinal < 0 || ordinal >= static_cast<int>(bus_ids().size())) return 101;  // CUDA_ERROR_INVALID_DEVICE
  *dev = ordinal;
  return 0;
}
FAKE_EXPORT int cuDeviceGetAttribute(int* v, int attr, int) {
  const char* cc = std::getenv("FAKE_CUDA_CC");
  int major = 9, minor = 0;
  if (cc) std::sscanf(cc, "%d.%d", &major, &minor);
  switch (attr) {
    case 75: *v = major; return 0;
    case 76: *v = minor; return 0;
    case 116: *v = env_int("FAKE_CUDA_GDR", 1); return 0;
    case 124: *v = env_int("FAKE_CUDA_DMABUF", 1); return 0;
    default: return 1;  // CUDA_ERROR_INVALID_VALUE
  }
}
FAKE_EXPORT int cuDeviceGetPCIBusId(char* out, int len, int dev) {
  auto ids = bus_ids();
  if (dev < 0 || dev >= static_cast<int>(ids.size())) return 101;
  std::snprintf(out, static_cast<size_t>(len), "%s", ids[static_cast<size_t>(dev)].c_str());
  return 0;
}
