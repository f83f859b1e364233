// SPDX-License-Identifier: Apache-2.0
// Every per-pair GPUDirect rule, with the exact diagnosis lines users see.
#include <gtest/gtest.h>

#include "railscope/gpu/gdr_decision.h"

namespace railscope::gpu {
namespace {

struct Scenario {
  GdrPolicy policy;
  PlatformFacts platform;
  GpuFacts gpu;
  NicFacts nic;
  PairFacts pair;

  Scenario() {
    platform.peer.loaded = true;
    platform.peer.evidence = "nvidia_peermem loaded";
    platform.kernel_dmabuf.supported = true;
    platform.kernel_dmabuf.evidence = "kernel 6.1.0 (>= 5.12)";
    platform.iommu.mode = IommuMode::None;
    gpu = {"GPU0", "0000:03:00.0", 9, 0, 1, 1, ""};
    nic = {"mlx5_0", "0000:04:00.0", DmabufProbe::Supported};
    pair.path = {PathType::Pix, {"0000:01:00.0", "0000:02:00.0", "0000:02:01.0"}, "switch 0000:01:00.0"};
    for (const auto& p : pair.path.switch_ports) {
      AcsStatus off;
      off.state = AcsState::NoCapability;
      pair.acs.push_back({p, off});
    }
  }
  PairDecision decide() const { return decide_pair(policy, platform, gpu, nic, pair); }
};

std::vector<std::string> ids(const PairDecision& d) {
  std::vector<std::string> out;
  for (const auto& f : d.findings) out.emplace_back(f.id());
  return out;
}

TEST(GdrDecision, EverythingInPlace) {
  Scenario s;
  auto d = s.decide();
  EXPECT_TRUE(d.distance_ok);
  EXPECT_TRUE(d.gdr);
  EXPECT_TRUE(d.gdr_read);
  EXPECT_EQ(d.ptr_support, kPtrHost | kPtrCuda | kPtrDmabuf);
  EXPECT_TRUE(d.findings.empty()) << diag::one_line(d.findings.front());
  EXPECT_EQ(d.cell(), "PIX gdr cuda+dmabuf");
}

TEST(GdrDecision, PxbIsWithinTheDefaultLevel) {
  Scenario s;
  s.pair.path.type = PathType::Pxb;
  EXPECT_TRUE(s.decide().gdr);
}

TEST(GdrDecision, AcrossSocketsRefusedAtDefaultLevel) {
  Scenario s;
  s.pair.path = {PathType::Sys, {}, "NUMA 0 <-> NUMA 1"};
  s.pair.acs.clear();
  s.pair.nearer_gpus = "GPU4, GPU5";
  auto d = s.decide();
  EXPECT_FALSE(d.gdr);
  EXPECT_EQ(d.ptr_support, kPtrHost);
  ASSERT_EQ(ids(d), std::vector<std::string>{"gdr.distance"});
  EXPECT_EQ(
      diag::one_line(d.findings[0]),
      "[gdr.distance] GPU0 (0000:03:00.0) and mlx5_0 (0000:04:00.0) are SYS apart (NUMA 0 <-> NUMA 1), "
      "beyond "
      "NCCL_NET_GDR_LEVEL=PXB (NCCL's default). Fix: Bind this rank to GPU4, GPU5 (within PXB of mlx5_0), or "
      "to a NIC next to GPU0; NCCL_NET_GDR_LEVEL=SYS would allow it if the platform sustains it");
  EXPECT_EQ(d.cell(), "SYS off (distance)");
}

TEST(GdrDecision, PhbRefusedWithNoNearerGpu) {
  Scenario s;
  s.pair.path = {PathType::Phb, {}, "host bridge, NUMA 0"};
  s.pair.acs.clear();
  auto d = s.decide();
  ASSERT_EQ(ids(d), std::vector<std::string>{"gdr.distance"});
  EXPECT_EQ(
      d.findings[0].effective_fix(),
      "No GPU is within PXB of mlx5_0: raise NCCL_NET_GDR_LEVEL to PHB only if this platform is known to "
      "sustain GPUDirect across it, or use a NIC closer to GPU0");
}

TEST(GdrDecision, UserLevelAllowsSys) {
  Scenario s;
  s.policy.level = parse_gdr_level("SYS");
  s.pair.path = {PathType::Sys, {}, "NUMA 0 <-> NUMA 1"};
  s.pair.acs.clear();
  EXPECT_TRUE(s.decide().gdr);
  s.policy.level = parse_gdr_level("LOC");  // NCCL_NET_GDR_LEVEL=LOC disables GDR entirely
  s.pair.path.type = PathType::Pix;
  auto d = s.decide();
  EXPECT_FALSE(d.gdr);
  EXPECT_TRUE(d.findings[0].detail.ends_with("beyond NCCL_NET_GDR_LEVEL=LOC")) << d.findings[0].detail;
}

TEST(GdrDecision, AcsRedirectRefuses) {
  Scenario s;
  s.pair.acs[1].acs.state = AcsState::Redirect;
  s.pair.acs[1].acs.control = kAcsCtrlRequestRedirect | kAcsCtrlCompletionRedirect;
  auto d = s.decide();
  EXPECT_TRUE(d.acs_redirect);
  EXPECT_FALSE(d.gdr);
  EXPECT_EQ(d.ptr_support, kPtrHost);
  ASSERT_EQ(ids(d), std::vector<std::string>{"gdr.acs"});
  EXPECT_EQ(
      diag::one_line(d.findings[0]),
      "[gdr.acs] ACS P2P redirect is on between GPU0 (0000:03:00.0) and mlx5_0 (0000:04:00.0): 0000:02:00.0 "
      "(ACS ctrl 0x000c: ReqRedir CmpltRedir); NIC writes to GPU memory go up to the root complex. Fix: As "
      "root, "
      "clear ACS control on the ports (for p in 0000:02:00.0; do setpci -s $p ECAP_ACS+0x6.w=0000; done), or "
      "disable ACS in the BIOS; in a VM keep ACS and enable ATS on the NIC");
  EXPECT_EQ(d.cell(), "PIX off (acs)");
}

TEST(GdrDecision, AcsUnreadableIsOnlyInformation) {
  Scenario s;
  s.pair.acs[2].acs.state = AcsState::NeedsRoot;
  auto d = s.decide();
  EXPECT_TRUE(d.gdr);
  ASSERT_EQ(ids(d), std::vector<std::string>{"gdr.acs_unknown"});
  EXPECT_EQ(d.findings[0].severity, diag::Severity::Info);
}

TEST(GdrDecision, DmabufAloneIsEnough) {
  Scenario s;
  s.platform.peer.loaded = false;
  auto d = s.decide();
  EXPECT_TRUE(d.gdr);
  EXPECT_FALSE(d.cuda_ptr);
  EXPECT_EQ(d.ptr_support, kPtrHost | kPtrDmabuf);
  EXPECT_TRUE(d.findings.empty());
  EXPECT_EQ(d.cell(), "PIX gdr dmabuf");
}

TEST(GdrDecision, NoPeerMemoryAndOldKernelRefuses) {
  Scenario s;
  s.platform.peer.loaded = false;
  s.platform.peer.evidence = "no /sys/module/nvidia_peermem";
  s.platform.kernel_dmabuf.supported = false;
  s.platform.kernel_dmabuf.evidence = "kernel 5.4.0 (< 5.12: no dma-buf MRs)";
  auto d = s.decide();
  EXPECT_FALSE(d.gdr);
  EXPECT_EQ(d.ptr_support, kPtrHost);
  ASSERT_EQ(ids(d), (std::vector<std::string>{"gdr.no_peermem", "gdr.dmabuf_unsupported"}));
  EXPECT_EQ(
      diag::one_line(d.findings[0]),
      "[gdr.no_peermem] no peer-memory client (no /sys/module/nvidia_peermem) and DMA-BUF is unusable (see "
      "gdr.dmabuf_unsupported). Fix: `modprobe nvidia-peermem` (GPU Operator: driver.rdma.enabled=true) or "
      "use "
      "a DMA-BUF capable stack");
  EXPECT_EQ(diag::one_line(d.findings[1]),
            "[gdr.dmabuf_unsupported] DMA-BUF off: kernel: kernel 5.4.0 (< 5.12: no dma-buf MRs). Fix: Use "
            "the open "
            "GPU kernel module with a kernel ≥ 5.12 and rdma-core ≥ 34, or load nvidia-peermem");
  EXPECT_EQ(d.cell(), "PIX off (no_peermem)");
}

TEST(GdrDecision, DmabufBlockersNamed) {
  Scenario s;
  s.gpu.dmabuf_supported = 0;
  auto d = s.decide();
  EXPECT_EQ(d.ptr_support, kPtrHost | kPtrCuda);
  EXPECT_EQ(d.findings.at(0).detail,
            "DMA-BUF off: the CUDA driver reports CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED=0 for GPU0");
  s.gpu.dmabuf_supported = 1;
  s.nic.verbs_dmabuf = DmabufProbe::Unsupported;
  EXPECT_EQ(s.decide().findings.at(0).detail,
            "DMA-BUF off: mlx5_0 refuses dma-buf MRs (ibv_reg_dmabuf_mr: EOPNOTSUPP)");
  s.nic.verbs_dmabuf = DmabufProbe::Unknown;
  EXPECT_EQ(s.decide().findings.at(0).detail, "DMA-BUF off: mlx5_0 was not probed with ibv_reg_dmabuf_mr");
  s.nic.verbs_dmabuf = DmabufProbe::Supported;
  s.gpu.dmabuf_supported = -1;
  EXPECT_EQ(s.decide().findings.at(0).detail,
            "DMA-BUF off: no CUDA driver to confirm CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED");
  s.gpu.dmabuf_supported = 1;
  s.policy.dmabuf_enable = false;
  EXPECT_EQ(s.decide().findings.at(0).detail, "DMA-BUF off: disabled by NCCL_DMABUF_ENABLE=0");
}

TEST(GdrDecision, GpuWithoutGdrSupport) {
  Scenario s;
  s.gpu.gdr_supported = 0;
  auto d = s.decide();
  EXPECT_FALSE(d.gdr);
  EXPECT_EQ(ids(d).at(0), "gdr.gpu_unsupported");
}

TEST(GdrDecision, GdrReadRules) {
  Scenario s;
  s.policy.gdr_read = 0;
  auto d = s.decide();
  EXPECT_TRUE(d.gdr);
  EXPECT_FALSE(d.gdr_read);
  EXPECT_EQ(ids(d), std::vector<std::string>{"gdr.read_off"});
  EXPECT_EQ(d.cell(), "PIX gdr cuda+dmabuf (recv only)");
  s.policy.gdr_read = -2;
  s.gpu.cc_major = 7;
  s.gpu.cc_minor = 0;
  d = s.decide();
  EXPECT_FALSE(d.gdr_read);
  EXPECT_NE(d.findings.at(0).detail.find("compute capability 7.0 (< 8.0)"), std::string::npos);
  s.policy.gdr_read = 1;
  EXPECT_TRUE(s.decide().gdr_read);
}

TEST(GdrDecision, TranslatingIommuIsReported) {
  Scenario s;
  s.gpu.iommu_domain = "DMA";
  auto d = s.decide();
  EXPECT_TRUE(d.gdr);
  ASSERT_EQ(ids(d), std::vector<std::string>{"gdr.iommu_translated"});
  EXPECT_EQ(d.findings[0].detail,
            "the IOMMU translates DMA for GPU0 (domain DMA); peer-to-peer writes from mlx5_0 need ATS or go "
            "through "
            "the root complex");
  s.gpu.iommu_domain = "identity";
  EXPECT_TRUE(s.decide().findings.empty());
}

TEST(GdrDecision, NicPtrSupportIsTheUnionOfItsPairs) {
  Scenario s;
  auto near = s.decide();
  s.pair.path = {PathType::Sys, {}, "x"};
  s.pair.acs.clear();
  s.gpu.label = "GPU1";
  auto far = s.decide();
  EXPECT_EQ(nic_ptr_support({far}, "mlx5_0", true, s.platform, DmabufProbe::Supported, s.policy), kPtrHost);
  EXPECT_EQ(nic_ptr_support({near, far}, "mlx5_0", true, s.platform, DmabufProbe::Supported, s.policy),
            kPtrHost | kPtrCuda | kPtrDmabuf);
  // No pair known: the platform's capability, NCCL checks the distance itself.
  EXPECT_EQ(nic_ptr_support({}, "mlx5_0", true, s.platform, DmabufProbe::Supported, s.policy),
            kPtrHost | kPtrCuda | kPtrDmabuf);
  EXPECT_EQ(nic_ptr_support({}, "mlx5_0", true, s.platform, DmabufProbe::Unsupported, s.policy),
            kPtrHost | kPtrCuda);
  // soft-RoCE and other virtual devices: host memory only, whatever the platform offers
  EXPECT_EQ(nic_ptr_support({}, "rxe0", false, s.platform, DmabufProbe::Supported, s.policy), kPtrHost);
  s.platform.peer.loaded = false;
  EXPECT_EQ(nic_ptr_support({}, "mlx5_0", true, s.platform, DmabufProbe::Unknown, s.policy), kPtrHost);
}

TEST(GdrPolicy, FromEnvironment) {
  setenv("NCCL_NET_GDR_LEVEL", "PHB", 1);
  setenv("NCCL_NET_GDR_READ", "0", 1);
  setenv("NCCL_DMABUF_ENABLE", "0", 1);
  auto p = GdrPolicy::from_env();
  unsetenv("NCCL_NET_GDR_LEVEL");
  unsetenv("NCCL_NET_GDR_READ");
  unsetenv("NCCL_DMABUF_ENABLE");
  EXPECT_EQ(p.level.level, PathType::Phb);
  EXPECT_EQ(p.gdr_read, 0);
  EXPECT_FALSE(p.dmabuf_enable);
  auto d = GdrPolicy::from_env();
  EXPECT_EQ(d.level.level, PathType::Pxb);
  EXPECT_EQ(d.gdr_read, -2);
  EXPECT_TRUE(d.dmabuf_enable);
}

}  // namespace
}  // namespace railscope::gpu
