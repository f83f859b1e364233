// SPDX-License-Identifier: Apache-2.0
// The node report over the synthetic DGX topology, a fake sysfs and the fake CUDA driver: the
// matrix, the node-level findings and the JSON doctor prints.
#include <gtest/gtest.h>

#include <cstdlib>

#include "fake_sysfs.h"
#include "railscope/gpu/gpudirect_json.h"
#include "railscope/gpu/gpudirect_report.h"

namespace railscope::gpu {
namespace {

using testing::FakeSysfs;
using testing::fixture;

const char* kDgxSwitchPorts[] = {"0000:01:00.0", "0000:02:00.0", "0000:02:01.0",
                                 "0000:02:02.0", "0000:05:00.0", "0000:06:00.0",
                                 "0000:81:00.0", "0000:82:00.0", "0000:82:01.0"};

// A healthy GPU node: nvidia-peermem, kernel 6.1, IOMMU passthrough, ACS present but off.
struct HealthyNode {
  FakeSysfs fs;
  ReportOptions options;
  HealthyNode() {
    fs.load_nvidia_peermem();
    fs.kernel("6.1.0-18-amd64");
    fs.write("/boot/config-6.1.0-18-amd64", "CONFIG_DMA_SHARED_BUFFER=y\n");
    fs.mkdir("/sys/class/iommu/dmar0");
    fs.write("/sys/kernel/iommu_groups/0/type", "identity\n");
    for (const char* p : kDgxSwitchPorts)
      fs.pci_config(p, FakeSysfs::config_space(true, kAcsCtrlSourceValidation));
    options.topo_file = fixture("dgx.xml");
    options.fs = SysfsRoot(fs.sys());
    options.cuda_library = RAILSCOPE_FAKE_CUDA;
    options.verbs_dmabuf = {{"mlx5_0", DmabufProbe::Supported}, {"mlx5_1", DmabufProbe::Supported}};
    options.policy = GdrPolicy{};
    setenv("FAKE_CUDA_BUSIDS", "0000:03:00.0,0000:07:00.0,0000:10:00.0,0000:83:00.0", 1);
  }
  ~HealthyNode() { unsetenv("FAKE_CUDA_BUSIDS"); }
};

TEST(GpuDirectReport, HealthyDgxMatrix) {
  HealthyNode node;
  auto r = build_report(node.options);
  EXPECT_EQ(
      render_text(r),
      "GPUDirect RDMA (topology: " + fixture("dgx.xml") +
          ")\n"
          "  CUDA driver : 13.0 via " RAILSCOPE_FAKE_CUDA
          ", 4 GPU(s)\n"
          "  peer memory : loaded (nvidia_peermem loaded; version 550.54.15)\n"
          "  DMA-BUF     : kernel yes (kernel 6.1.0-18-amd64 (>= 5.12); CONFIG_DMA_SHARED_BUFFER=y)\n"
          "  IOMMU       : passthrough (1 iommu group(s) in identity (passthrough) mode)\n"
          "  policy      : NCCL_NET_GDR_LEVEL=PXB (default) NCCL_NET_GDR_READ=-2 NCCL_DMABUF_ENABLE=1\n"
          "  GPU0   0000:03:00.0 NUMA 0 cc 9.0, gdr attr 1, dma-buf attr 1\n"
          "  GPU1   0000:07:00.0 NUMA 0 cc 9.0, gdr attr 1, dma-buf attr 1\n"
          "  GPU2   0000:10:00.0 NUMA 0 cc 9.0, gdr attr 1, dma-buf attr 1\n"
          "  GPU3   0000:83:00.0 NUMA 1 cc 9.0, gdr attr 1, dma-buf attr 1\n"
          "  mlx5_0 0000:04:00.0 NUMA 0 dma-buf probe supported\n"
          "  mlx5_1 0000:84:00.0 NUMA 1 dma-buf probe supported\n"
          "         | mlx5_0              | mlx5_1\n"
          "  GPU0   | PIX gdr cuda+dmabuf | SYS off (distance)\n"
          "  GPU1   | PXB gdr cuda+dmabuf | SYS off (distance)\n"
          "  GPU2   | PHB off (distance)  | SYS off (distance)\n"
          "  GPU3   | SYS off (distance)  | PIX gdr cuda+dmabuf\n"
          "  [gdr.distance] GPU2 (0000:10:00.0) and mlx5_0 (0000:04:00.0) are PHB apart (host bridge, NUMA "
          "0), "
          "beyond NCCL_NET_GDR_LEVEL=PXB (NCCL's default). Fix: Bind this rank to GPU0, GPU1 (within PXB of "
          "mlx5_0), or to a NIC next to GPU2; NCCL_NET_GDR_LEVEL=PHB would allow it if the platform sustains "
          "it\n"
          "  [gdr.distance] GPU2 (0000:10:00.0) and mlx5_1 (0000:84:00.0) are SYS apart (NUMA 0 <-> NUMA 1), "
          "beyond NCCL_NET_GDR_LEVEL=PXB (NCCL's default). Fix: Bind this rank to GPU3 (within PXB of "
          "mlx5_1), or to a NIC next to GPU2; NCCL_NET_GDR_LEVEL=SYS would allow it if the platform sustains "
          "it\n");
  const auto* p = r.pair("GPU3", "mlx5_1");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->ptr_support, kPtrHost | kPtrCuda | kPtrDmabuf);
  EXPECT_EQ(nic_ptr_support(r.pairs, "mlx5_1", true, r.platform, DmabufProbe::Supported, r.policy), 7);
  EXPECT_EQ(worst_severity(r), diag::Severity::Info);
}

TEST(GpuDirectReport, AcsRedirectOnOneSwitchPort) {
  HealthyNode node;
  node.fs.pci_config("0000:82:00.0",
                     FakeSysfs::config_space(true, kAcsCtrlRequestRedirect | kAcsCtrlCompletionRedirect));
  auto r = build_report(node.options);
  EXPECT_EQ(r.pair("GPU3", "mlx5_1")->cell(), "PIX off (acs)");
  EXPECT_EQ(r.pair("GPU0", "mlx5_0")->cell(), "PIX gdr cuda+dmabuf");
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id(), "gdr.acs");  // warnings before information
  EXPECT_NE(diag::one_line(r.findings[0]).find("0000:82:00.0 (ACS ctrl 0x000c: ReqRedir CmpltRedir)"),
            std::string::npos);
  // GPU3 now has no usable NIC: its distance refusal is reported too.
  EXPECT_EQ(worst_severity(r), diag::Severity::Warning);
}

TEST(GpuDirectReport, GdrLevelPhbAllowsTheRootComplexPath) {
  HealthyNode node;
  node.options.policy->level = parse_gdr_level("PHB");
  auto r = build_report(node.options);
  EXPECT_EQ(r.pair("GPU2", "mlx5_0")->cell(), "PHB gdr cuda+dmabuf");
  EXPECT_EQ(r.pair("GPU2", "mlx5_1")->cell(), "SYS off (distance)");
  EXPECT_NE(render_text(r).find("policy      : NCCL_NET_GDR_LEVEL=PHB NCCL_NET_GDR_READ=-2"),
            std::string::npos);
  for (const auto& f : r.findings) EXPECT_NE(f.id(), "gdr.distance") << diag::one_line(f);
}

TEST(GpuDirectReport, NoPeerMemoryNoDmabufVerbs) {
  HealthyNode node;
  std::filesystem::remove_all(node.fs.root() + "/sys/module/nvidia_peermem");
  node.options.verbs_dmabuf = {{"mlx5_0", DmabufProbe::Unsupported}};
  auto r = build_report(node.options);
  EXPECT_EQ(r.pair("GPU0", "mlx5_0")->cell(), "PIX off (no_peermem)");
  EXPECT_EQ(r.pair("GPU3", "mlx5_1")->cell(), "PIX off (no_peermem)");
  std::string text = render_text(r);
  EXPECT_NE(text.find("  peer memory : not loaded (no /sys/module/nvidia_peermem"), std::string::npos)
      << text;
  EXPECT_NE(text.find("[gdr.dmabuf_unsupported] DMA-BUF off: mlx5_0 refuses dma-buf MRs (ibv_reg_dmabuf_mr: "
                      "EOPNOTSUPP)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("[gdr.dmabuf_unsupported] DMA-BUF off: mlx5_1 was not probed with ibv_reg_dmabuf_mr"),
            std::string::npos)
      << text;
  EXPECT_EQ(r.findings[0].id(), "gdr.no_peermem");
}

TEST(GpuDirectReport, SingleGpuWithoutNicLikeTheGpuCheckMachine) {
  FakeSysfs fs;
  ReportOptions o;
  o.topo_file = fixture("single_gpu.xml");
  o.fs = SysfsRoot(fs.sys());
  o.cuda_library = RAILSCOPE_FAKE_CUDA;
  o.policy = GdrPolicy{};
  setenv("FAKE_CUDA_BUSIDS", "0000:01:00.0", 1);
  auto r = build_report(o);
  unsetenv("FAKE_CUDA_BUSIDS");
  std::string text = render_text(r);
  EXPECT_NE(text.find("  GPU0   0000:01:00.0 NUMA 0 cc 9.0, gdr attr 1, dma-buf attr 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  no RDMA NIC: GPUDirect RDMA does not apply\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[gdr.no_rdma_nic] no RDMA NIC in the topology from " + fixture("single_gpu.xml")),
            std::string::npos)
      << text;
  EXPECT_TRUE(r.pairs.empty());
}

TEST(GpuDirectReport, WithoutCudaDriverStillDecidesFromTopology) {
  HealthyNode node;
  node.options.cuda_library = "libcuda-not-here.so.1";
  auto r = build_report(node.options);
  EXPECT_FALSE(r.cuda.loaded);
  EXPECT_EQ(r.findings.size(), 4u);  // no_cuda_driver, dmabuf unconfirmed, GPU2's two distance lines
  EXPECT_EQ(r.pair("GPU0", "mlx5_0")->cell(), "PIX gdr cuda");  // peer memory needs no CUDA answer
  std::string text = render_text(r);
  EXPECT_NE(text.find("  CUDA driver : no CUDA driver (libcuda-not-here.so.1: "), std::string::npos) << text;
  EXPECT_NE(text.find("[gdr.no_cuda_driver] no CUDA driver ("), std::string::npos) << text;
}

TEST(GpuDirectReport, CudaGpuMissingFromTopologyIsListed) {
  HealthyNode node;
  setenv("FAKE_CUDA_BUSIDS", "0000:03:00.0,0000:07:00.0,0000:10:00.0,0000:83:00.0,0000:c1:00.0", 1);
  auto r = build_report(node.options);
  ASSERT_EQ(r.gpus.size(), 5u);
  EXPECT_EQ(r.gpus[4].facts.label, "GPU4");
  EXPECT_FALSE(r.gpus[4].in_topology);
  EXPECT_NE(render_text(r).find(
                "  GPU4   0000:c1:00.0 NUMA ? cc 9.0, gdr attr 1, dma-buf attr 1 (not in topology)"),
            std::string::npos);
}

TEST(GpuDirectReport, BadTopologyFile) {
  HealthyNode node;
  node.options.topo_file = node.fs.root() + "/missing.xml";
  auto r = build_report(node.options);
  EXPECT_FALSE(r.topology_error.empty());
  std::string text = render_text(r);
  EXPECT_NE(text.find("  no matrix: cannot use topology file '" + node.fs.root() + "/missing.xml'"),
            std::string::npos)
      << text;
  EXPECT_EQ(r.findings[0].id(), "gdr.topology");
}

TEST(GpuDirectReport, TopologyFromEnvironment) {
  HealthyNode node;
  node.options.topo_file.clear();
  setenv("RAILSCOPE_TOPO_FILE", fixture("bcm_gen4.xml").c_str(), 1);
  auto r = build_report(node.options);
  unsetenv("RAILSCOPE_TOPO_FILE");
  EXPECT_EQ(r.topology_source, fixture("bcm_gen4.xml"));
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_EQ(r.pairs[0].path, PathType::Pix);
}

TEST(GpuDirectReport, InvalidGdrLevelIsReported) {
  HealthyNode node;
  node.options.policy->level = parse_gdr_level("phb");
  auto r = build_report(node.options);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id(), "config.bad_env");
  EXPECT_NE(r.findings[0].detail.find("NCCL_NET_GDR_LEVEL='phb' is not a level NCCL knows"),
            std::string::npos);
}

TEST(GpuDirectReport, Json) {
  HealthyNode node;
  auto j = to_json(build_report(node.options));
  EXPECT_EQ(j["cuda"]["loaded"], true);
  EXPECT_EQ(j["peer_memory"]["loaded"], true);
  EXPECT_EQ(j["iommu"]["mode"], "passthrough");
  EXPECT_EQ(j["policy"]["gdr_level"], "PXB");
  ASSERT_EQ(j["pairs"].size(), 8u);
  EXPECT_EQ(j["pairs"][0]["gpu"], "GPU0");
  EXPECT_EQ(j["pairs"][0]["nic"], "mlx5_0");
  EXPECT_EQ(j["pairs"][0]["path"], "PIX");
  EXPECT_EQ(j["pairs"][0]["ptr_support"], 7);
  EXPECT_EQ(j["pairs"][1]["findings"][0], "gdr.distance");
  EXPECT_EQ(j["gpus"][3]["numa"], 1);
  EXPECT_EQ(j["nics"][1]["dmabuf_probe"], "supported");
  EXPECT_EQ(j["findings"].size(), 2u);
}

}  // namespace
}  // namespace railscope::gpu

namespace railscope::gpu {
namespace {

TEST(GpuDirectReport, VirtualRdmaDevicesAreHostOnly) {
  FakeSysfs fs;
  ReportOptions o;
  o.topo_file = fixture("single_gpu.xml");
  o.fs = SysfsRoot(fs.sys());
  o.query_cuda = false;
  o.policy = GdrPolicy{};
  o.nic_hints = {{"rxe0", ""}, {"rxe1", ""}};
  o.verbs_dmabuf = {{"rxe0", DmabufProbe::Unsupported}};
  auto r = build_report(o);
  EXPECT_TRUE(r.nics.empty());
  ASSERT_EQ(r.virtual_nics.size(), 2u);
  std::string text = render_text(r);
  EXPECT_NE(text.find("  rxe0   not a PCI device (virtual): host memory only, dma-buf probe unsupported\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  rxe1   not a PCI device (virtual): host memory only, dma-buf probe unknown\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(only virtual RDMA devices: rxe0, rxe1): GPUDirect RDMA does not apply"),
            std::string::npos)
      << text;
  EXPECT_EQ(nic_ptr_support(r.pairs, "rxe0", false, r.platform, DmabufProbe::Unsupported, r.policy),
            kPtrHost);
}

}  // namespace
}  // namespace railscope::gpu
