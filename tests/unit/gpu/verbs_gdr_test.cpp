// SPDX-License-Identifier: Apache-2.0
// DMA-BUF probe verdicts and the mapping of registration failures to the catalogue.
#include <gtest/gtest.h>

#include <cerrno>

#include "railscope/gpu/verbs_gdr.h"

namespace railscope::gpu {
namespace {

TEST(DmabufProbe, ErrnoRuleIsNccls) {
  EXPECT_EQ(classify_dmabuf_probe_errno(EOPNOTSUPP), DmabufProbe::Unsupported);
  EXPECT_EQ(classify_dmabuf_probe_errno(EPROTONOSUPPORT), DmabufProbe::Unsupported);
  EXPECT_EQ(classify_dmabuf_probe_errno(EBADF), DmabufProbe::Supported);
  EXPECT_EQ(classify_dmabuf_probe_errno(EINVAL), DmabufProbe::Supported);
}

TEST(DmabufProbe, WithoutPdIsUnknown) {
  auto r = probe_verbs_dmabuf(nullptr);
  EXPECT_EQ(r.result, DmabufProbe::Unknown);
  EXPECT_EQ(r.detail, "no protection domain to probe with");
}

TEST(RegistrationFailure, EfaultOnCudaMemoryMeansNoPeerMemory) {
  PeerMemoryStatus peer;
  peer.evidence =
      "no /sys/module/nvidia_peermem, /sys/module/nv_peer_mem or /sys/kernel/mm/memory_peers/nv_mem*";
  auto f = classify_registration_failure(RegKind::CudaPeerMemory, EFAULT, "mlx5_0", 2097152, &peer);
  EXPECT_EQ(f.id(), "gdr.cuda_reg_efault");
  EXPECT_EQ(
      diag::one_line(f),
      "[gdr.cuda_reg_efault] registering 2097152 bytes of GPU memory on mlx5_0 failed with Bad address (14); "
      "the kernel could not pin GPU pages: no /sys/module/nvidia_peermem, /sys/module/nv_peer_mem or "
      "/sys/kernel/mm/memory_peers/nv_mem*. Fix: `modprobe nvidia-peermem`");
}

TEST(RegistrationFailure, EfaultOnHostMemoryIsGeneric) {
  auto f = classify_registration_failure(RegKind::Host, EFAULT, "rxe0", 4096, nullptr);
  EXPECT_EQ(f.id(), "reg.failed");
}

TEST(RegistrationFailure, EnomemIsMemlock) {
  auto f = classify_registration_failure(RegKind::CudaPeerMemory, ENOMEM, "mlx5_0", 4096, nullptr);
  EXPECT_EQ(f.id(), "memlock.too_low");
  EXPECT_NE(f.detail.find("RLIMIT_MEMLOCK is "), std::string::npos) << f.detail;
}

TEST(RegistrationFailure, DmabufNotSupported) {
  auto f = classify_registration_failure(RegKind::Dmabuf, EOPNOTSUPP, "mlx5_1", 65536, nullptr);
  EXPECT_EQ(f.id(), "gdr.dmabuf_unsupported");
  EXPECT_NE(diag::one_line(f).find("Fix: Upgrade the kernel (>= 5.12)"), std::string::npos)
      << diag::one_line(f);
}

}  // namespace
}  // namespace railscope::gpu
