// SPDX-License-Identifier: Apache-2.0
// The verbs engine's GPUDirect decision per NIC (gdr_support.h): which ptrSupport bits it offers,
// the reason for each missing bit, fused devices, the decision line, and the flush rule.
#include "plugin/net/verbs/gpu/gdr_support.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

namespace railscope::net::verbs {
namespace {

GdrHost host(bool peer, bool kernel_dmabuf, bool dmabuf_enable = true) {
  GdrHost h;
  h.platform.peer.loaded = peer;
  h.platform.peer.evidence = peer ? "nvidia_peermem loaded" : "no /sys/module/nvidia_peermem";
  h.platform.kernel_dmabuf.supported = kernel_dmabuf;
  h.platform.kernel_dmabuf.evidence = kernel_dmabuf ? "6.1" : "4.18 < 5.12";
  h.policy.dmabuf_enable = dmabuf_enable;
  return h;
}

gpu::DmabufProbeResult probe(gpu::DmabufProbe p) {
  gpu::DmabufProbeResult r;
  r.result = p;
  r.detail = p == gpu::DmabufProbe::Supported ? "EBADF" : "ibv_reg_dmabuf_mr(fd=-1) failed with EOPNOTSUPP";
  return r;
}

TEST(GdrSupport, VirtualNicOffersHostOnlyAndSaysWhy) {
  auto d = decide_nic_gdr(host(false, true), "rxe0", false, probe(gpu::DmabufProbe::Unsupported));
  EXPECT_EQ(d.ptr_support, gpu::kPtrHost);
  ASSERT_NE(d.cuda_refusal(), nullptr);
  EXPECT_EQ(d.cuda_refusal()->id(), "gdr.nic_virtual");
  ASSERT_NE(d.dmabuf_refusal(), nullptr);
  EXPECT_EQ(d.dmabuf_refusal()->id(), "gdr.nic_virtual");
  // Every reason is listed: the virtual device first, then the host's missing peer memory and DMA-BUF.
  ASSERT_EQ(d.refusals.size(), 3u);
  EXPECT_EQ(d.refusals[0].id(), "gdr.nic_virtual");
  EXPECT_EQ(d.refusals[1].id(), "gdr.no_peermem");
  EXPECT_EQ(d.refusals[2].id(), "gdr.dmabuf_unsupported");
  EXPECT_NE(d.refusals[0].detail.find("rxe0"), std::string::npos);
}

TEST(GdrSupport, VirtualNicWithPeerMemoryStillHostOnly) {
  auto d = decide_nic_gdr(host(true, true), "rxe0", false, probe(gpu::DmabufProbe::Supported));
  EXPECT_EQ(d.ptr_support, gpu::kPtrHost);
  ASSERT_EQ(d.refusals.size(), 1u);
  EXPECT_EQ(d.refusals[0].id(), "gdr.nic_virtual");
}

TEST(GdrSupport, PciNicWithPeerMemoryAndDmabuf) {
  auto d = decide_nic_gdr(host(true, true), "mlx5_0", true, probe(gpu::DmabufProbe::Supported));
  EXPECT_EQ(d.ptr_support, gpu::kPtrHost | gpu::kPtrCuda | gpu::kPtrDmabuf);
  EXPECT_TRUE(d.refusals.empty());
  EXPECT_EQ(d.cuda_refusal(), nullptr);
  EXPECT_EQ(d.dmabuf_refusal(), nullptr);
}

TEST(GdrSupport, PciNicWithoutPeerMemoryButDmabuf) {
  auto d = decide_nic_gdr(host(false, true), "mlx5_0", true, probe(gpu::DmabufProbe::Supported));
  EXPECT_EQ(d.ptr_support, gpu::kPtrHost | gpu::kPtrDmabuf);
  ASSERT_NE(d.cuda_refusal(), nullptr);
  EXPECT_EQ(d.cuda_refusal()->id(), "gdr.no_peermem");
  EXPECT_EQ(d.dmabuf_refusal(), nullptr);
}

TEST(GdrSupport, DmabufRefusalsNameTheirCause) {
  auto off = decide_nic_gdr(host(true, true, false), "mlx5_0", true, probe(gpu::DmabufProbe::Supported));
  EXPECT_EQ(off.ptr_support, gpu::kPtrHost | gpu::kPtrCuda);
  ASSERT_NE(off.dmabuf_refusal(), nullptr);
  EXPECT_EQ(off.dmabuf_refusal()->id(), "gdr.dmabuf_unsupported");
  EXPECT_NE(off.dmabuf_refusal()->detail.find("NCCL_DMABUF_ENABLE=0"), std::string::npos);

  auto kernel = decide_nic_gdr(host(true, false), "mlx5_0", true, probe(gpu::DmabufProbe::Supported));
  ASSERT_NE(kernel.dmabuf_refusal(), nullptr);
  EXPECT_NE(kernel.dmabuf_refusal()->detail.find("4.18 < 5.12"), std::string::npos);

  auto dev = decide_nic_gdr(host(true, true), "mlx5_0", true, probe(gpu::DmabufProbe::Unsupported));
  ASSERT_NE(dev.dmabuf_refusal(), nullptr);
  EXPECT_NE(dev.dmabuf_refusal()->detail.find("EOPNOTSUPP"), std::string::npos);
}

TEST(GdrSupport, FusedDeviceOffersWhatEveryMemberOffers) {
  auto full = decide_nic_gdr(host(true, true), "mlx5_0", true, probe(gpu::DmabufProbe::Supported));
  auto virt = decide_nic_gdr(host(true, true), "rxe0", false, probe(gpu::DmabufProbe::Unsupported));
  auto both = combine_nic_gdr({&full, &virt});
  EXPECT_EQ(both.ptr_support, gpu::kPtrHost);
  ASSERT_NE(both.cuda_refusal(), nullptr);
  EXPECT_EQ(both.cuda_refusal()->id(), "gdr.nic_virtual");
  auto same = combine_nic_gdr({&full, &full});
  EXPECT_EQ(same.ptr_support, full.ptr_support);
  EXPECT_TRUE(same.refusals.empty());
}

TEST(GdrSupport, PtrSupportText) {
  EXPECT_EQ(ptr_support_text(1), "HOST");
  EXPECT_EQ(ptr_support_text(1 | 2), "HOST|CUDA");
  EXPECT_EQ(ptr_support_text(1 | 2 | 4), "HOST|CUDA|DMABUF");
  EXPECT_EQ(ptr_support_text(1 | 4), "HOST|DMABUF");
}

TEST(GdrSupport, DecisionLineNamesPolicyAndReasons) {
  auto h = host(false, true);
  h.policy.level.level = gpu::PathType::Phb;
  h.policy.level.from_env = true;
  auto d = decide_nic_gdr(h, "rxe0", false, probe(gpu::DmabufProbe::Unsupported));
  std::string line = gdr_decision_line(h, "rxe0", d);
  EXPECT_EQ(line.rfind("GPUDirect rxe0: ptrSupport=HOST (NCCL_NET_GDR_LEVEL=PHB set,", 0), 0u) << line;
  EXPECT_NE(line.find("peer memory absent"), std::string::npos) << line;
  EXPECT_NE(line.find("dma-buf probe unsupported"), std::string::npos) << line;
  EXPECT_NE(line.find("flush off"), std::string::npos) << line;
  EXPECT_NE(line.find("not offered because: gdr.nic_virtual, gdr.no_peermem, gdr.dmabuf_unsupported"),
            std::string::npos)
      << line;
}

TEST(GdrSupport, FlushModeParsing) {
  EXPECT_EQ(parse_flush_mode("auto"), FlushMode::Auto);
  EXPECT_EQ(parse_flush_mode(""), FlushMode::Auto);
  EXPECT_EQ(parse_flush_mode("force"), FlushMode::Force);
  EXPECT_EQ(parse_flush_mode("off"), FlushMode::Off);
  EXPECT_FALSE(parse_flush_mode("yes").has_value());
  EXPECT_FALSE(parse_flush_mode("FORCE").has_value());
}

TEST(GdrSupport, FlushModeFromEnvFallsBackToAuto) {
  ::setenv("RAILSCOPE_NET_FLUSH", "sometimes", 1);
  EXPECT_EQ(flush_mode_from_env(), FlushMode::Auto);
  ::setenv("RAILSCOPE_NET_FLUSH", "force", 1);
  EXPECT_EQ(flush_mode_from_env(), FlushMode::Force);
  ::unsetenv("RAILSCOPE_NET_FLUSH");
  EXPECT_EQ(flush_mode_from_env(), FlushMode::Auto);
}

TEST(GdrSupport, FlushWanted) {
  gpu::FlushPolicy on{true, "on"}, off{false, "off"};
  EXPECT_TRUE(flush_wanted(FlushMode::Auto, on, true));
  EXPECT_FALSE(flush_wanted(FlushMode::Auto, on, false));  // host memory: already visible
  EXPECT_FALSE(flush_wanted(FlushMode::Auto, off, true));  // NCCL_GDR_FLUSH_DISABLE / no GPUDirect
  EXPECT_TRUE(flush_wanted(FlushMode::Force, off, false));
  EXPECT_FALSE(flush_wanted(FlushMode::Off, on, true));
}

}  // namespace
}  // namespace railscope::net::verbs
