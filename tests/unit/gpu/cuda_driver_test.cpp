// SPDX-License-Identifier: Apache-2.0
// The CUDA driver through dlopen: absent library, failing cuInit, and a (fake) driver's answers.
#include <gtest/gtest.h>

#include <cstdlib>

#include "railscope/gpu/cuda_driver.h"

namespace railscope::gpu {
namespace {

TEST(CudaDriver, MissingLibraryIsNoCudaDriver) {
  auto info = query_cuda_driver("libcuda-does-not-exist.so.1");
  EXPECT_FALSE(info.loaded);
  EXPECT_TRUE(info.gpus.empty());
  EXPECT_EQ(info.error.rfind("no CUDA driver (", 0), 0u) << info.error;
}

TEST(CudaDriver, DefaultNamesOnThisGpulessHost) {
  // Hosts here have no NVIDIA driver: the default lookup must fail cleanly, not crash.
  auto info = query_cuda_driver();
  if (info.loaded) GTEST_SKIP() << "a CUDA driver is installed here: " << info.library;
  EXPECT_NE(info.error.find("libcuda.so.1"), std::string::npos) << info.error;
}

TEST(CudaDriver, LibraryWithoutDriverApiIsRejected) {
  auto info = query_cuda_driver("libc.so.6");
  EXPECT_FALSE(info.loaded);
  EXPECT_NE(info.error.find("lacks a driver API entry point"), std::string::npos) << info.error;
}

TEST(CudaDriver, ReadsDevicesBusIdsAndAttributes) {
  setenv("FAKE_CUDA_BUSIDS", "0000:1B:00.0,0000:83:00.0", 1);
  setenv("FAKE_CUDA_DMABUF", "0", 1);
  setenv("FAKE_CUDA_CC", "9.0", 1);
  auto info = query_cuda_driver(RAILSCOPE_FAKE_CUDA);
  unsetenv("FAKE_CUDA_DMABUF");
  ASSERT_TRUE(info.loaded) << info.error;
  EXPECT_EQ(info.driver_version, 13000);
  ASSERT_EQ(info.gpus.size(), 2u);
  EXPECT_EQ(info.gpus[0].pci_bus_id, "0000:1b:00.0");  // normalised to lower case
  EXPECT_EQ(info.gpus[1].ordinal, 1);
  EXPECT_EQ(info.gpus[0].cc_major, 9);
  EXPECT_EQ(info.gpus[0].gdr_supported, 1);
  EXPECT_EQ(info.gpus[0].dmabuf_supported, 0);
  unsetenv("FAKE_CUDA_BUSIDS");
}

TEST(CudaDriver, FailingCuInitIsReported) {
  setenv("FAKE_CUDA_INIT", "100", 1);
  auto info = query_cuda_driver(RAILSCOPE_FAKE_CUDA);
  unsetenv("FAKE_CUDA_INIT");
  EXPECT_FALSE(info.loaded);
  EXPECT_EQ(info.error, "cuInit failed with CUresult 100 (no CUDA-capable device)");
}

TEST(CudaDriver, NormalizeBdf) {
  EXPECT_EQ(normalize_bdf("0000:1B:00.0"), "0000:1b:00.0");
  EXPECT_EQ(normalize_bdf("1b:00.1"), "0000:1b:00.1");
  EXPECT_EQ(normalize_bdf("00000000:1B:00.0"), "0000:1b:00.0");  // cuDeviceGetPCIBusId's 8-digit domain
  EXPECT_EQ(normalize_bdf("mlx5_0"), "");
  EXPECT_EQ(normalize_bdf("0000:1b:00.0x"), "");
  EXPECT_EQ(normalize_bdf("0000:1b:20.0"), "");  // device > 31
}

}  // namespace
}  // namespace railscope::gpu
