// SPDX-License-Identifier: Apache-2.0
// doctor's devices section: each NIC's PCIe link against its capability (pcie.link_degraded), its part
// name, and the link section's Ethernet ports in Gb/s without InfiniBand rate names; the gpu_pcie
// section: each NVIDIA GPU's link width against its capability, its speed shown but not judged (an idle
// GPU lowers it).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>

#include "doctor.h"
#include "fabric_fixtures.h"
#include "railscope/node/gpu_count.h"
#include "railscope/node/pcie_link.h"
#include "railscope/node/sysfs.h"

using namespace railscope;
using namespace railscope::doctor;
using railscope::testing_fixtures::FabricTree;

namespace {

int count(const Section& s, const std::string& id) {
  int n = 0;
  for (const auto& f : s.findings) n += f.id() == id;
  return n;
}

void link(const FabricTree& t, const std::string& rel, const std::string& width, const std::string& speed,
          const std::string& max_width, const std::string& max_speed) {
  t.put(rel + "/current_link_width", width + "\n");
  t.put(rel + "/current_link_speed", speed + "\n");
  t.put(rel + "/max_link_width", max_width + "\n");
  t.put(rel + "/max_link_speed", max_speed + "\n");
}

void full_links(const FabricTree& t) {
  for (int i = 0; i < 8; ++i)
    link(t, "class/infiniband/mlx5_" + std::to_string(i) + "/device", "16", "32.0 GT/s PCIe", "16",
         "32.0 GT/s PCIe");
}

}  // namespace

TEST(DoctorPcie, ParsesTheKernelsSpeedWords) {
  EXPECT_DOUBLE_EQ(node::parse_link_speed_gts("32.0 GT/s PCIe"), 32.0);
  EXPECT_DOUBLE_EQ(node::parse_link_speed_gts("2.5 GT/s PCIe"), 2.5);
  EXPECT_DOUBLE_EQ(node::parse_link_speed_gts("8 GT/s"), 8.0);
  EXPECT_DOUBLE_EQ(node::parse_link_speed_gts("Unknown"), 0.0);
  EXPECT_DOUBLE_EQ(node::parse_link_speed_gts("16.0 Gb/s"), 0.0);
  EXPECT_DOUBLE_EQ(node::parse_link_speed_gts(""), 0.0);
}

TEST(DoctorPcie, FullLinksHaveNoFinding) {
  FabricTree t("doctor-pcie-full");
  testing_fixtures::healthy_ndr8(t);
  full_links(t);
  const NodeFacts f = gather({t.root(), false, ""});
  const Report r = run(f);
  EXPECT_EQ(count(section_named(r, "devices"), "pcie.link_degraded"), 0);
  const auto j = to_json(r, f)["sections"]["devices"]["devices"][0]["pcie"];
  EXPECT_EQ(j["width"], 16);
  EXPECT_EQ(j["max_speed_gts"], 32.0);
  EXPECT_EQ(j["degraded"], false);
  EXPECT_NE(to_text(r, f).find("PCIe link x16 at 32 GT/s (capable of x16 at 32 GT/s)"), std::string::npos);
}

// The pcie.link_degraded findings of the node in t, each as its one line (detail and fix).
std::vector<std::string> pcie_findings(const FabricTree& t) {
  std::vector<std::string> out;
  const Report r = run(gather({t.root(), false, ""}));
  for (const auto& f : section_named(r, "devices").findings)
    if (f.id() == "pcie.link_degraded") {
      EXPECT_EQ(f.severity, diag::Severity::Warning);
      out.push_back(diag::one_line(f));
    }
  return out;
}

TEST(DoctorPcie, NarrowLinkWarnsWithBothValues) {
  FabricTree t("doctor-pcie-x8");
  testing_fixtures::healthy_ndr8(t);
  full_links(t);
  link(t, "class/infiniband/mlx5_3/device", "8", "32.0 GT/s PCIe", "16", "32.0 GT/s PCIe");
  const auto found = pcie_findings(t);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].find("mlx5_3"), std::string::npos) << found[0];
  EXPECT_NE(found[0].find("trained x8 at 32 GT/s, capable of x16 at 32 GT/s: 8 of 16 lanes"),
            std::string::npos)
      << found[0];
  EXPECT_NE(found[0].find("Reseat"), std::string::npos) << found[0];
}

TEST(DoctorPcie, SlowLinkWarns) {
  FabricTree t("doctor-pcie-gen3");
  testing_fixtures::healthy_ndr8(t);
  full_links(t);
  link(t, "class/infiniband/mlx5_0/device", "16", "8.0 GT/s PCIe", "16", "32.0 GT/s PCIe");
  const auto found = pcie_findings(t);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].find("trained x16 at 8 GT/s, capable of x16 at 32 GT/s: a lower PCIe generation"),
            std::string::npos)
      << found[0];
}

// A device without link attributes of its own: the upstream port's, one level up its sysfs path.
TEST(DoctorPcie, ReadsTheUpstreamPortWhereTheDeviceHasNoLink) {
  FabricTree t("doctor-pcie-upstream");
  const std::string port = "devices/pci0000:00/0000:00:01.0";
  t.put(port + "/0000:17:00.0/vendor", "0x15b3\n");
  link(t, port, "8", "16.0 GT/s PCIe", "16", "16.0 GT/s PCIe");
  std::filesystem::create_directories(std::filesystem::path(t.root()) / "class/infiniband/mlx5_0");
  std::filesystem::create_directory_symlink(
      "../../../" + port + "/0000:17:00.0",
      std::filesystem::path(t.root()) / "class/infiniband/mlx5_0/device");
  const node::Sysfs sysfs(t.root());
  const auto l = node::read_pcie_link(sysfs, "class/infiniband/mlx5_0/device");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->reported_by, "0000:00:01.0");
  EXPECT_EQ(l->width, 8);
  EXPECT_TRUE(l->narrower());
  EXPECT_FALSE(l->slower());
  // The root complex has no port above it: nothing to read there.
  t.put("devices/pci0000:01/0000:01:00.0/vendor", "0x15b3\n");
  std::filesystem::create_directories(std::filesystem::path(t.root()) / "class/infiniband/mlx5_1");
  std::filesystem::create_directory_symlink(
      "../../../devices/pci0000:01/0000:01:00.0",
      std::filesystem::path(t.root()) / "class/infiniband/mlx5_1/device");
  EXPECT_FALSE(node::read_pcie_link(sysfs, "class/infiniband/mlx5_1/device"));
}

TEST(DoctorPcie, PartNameFromBoardIdAndHcaType) {
  FabricTree t("doctor-pcie-part");
  testing_fixtures::healthy_ndr8(t);
  t.put("class/infiniband/mlx5_0/board_id", "MT_0000000838\n");
  t.put("class/infiniband/mlx5_0/hca_type", "MT4129\n");
  const NodeFacts f = gather({t.root(), false, ""});
  const Report r = run(f);
  const auto d = to_json(r, f)["sections"]["devices"]["devices"];
  EXPECT_EQ(d[0]["board_id"], "MT_0000000838");
  EXPECT_EQ(d[0]["hca_type"], "MT4129");
  EXPECT_TRUE(d[1]["board_id"].is_null());
  EXPECT_NE(to_text(r, f).find("part MT_0000000838  type MT4129"), std::string::npos);
}

TEST(DoctorPcie, EthernetPortsShowGbitWithoutInfinibandRateNames) {
  FabricTree t("doctor-eth-rate");
  t.roce_port("mlx5_0", "ens1f0np0", "10 Gb/sec (1X QDR)", 10);
  t.ib_port("mlx5_1", "400 Gb/sec (4X NDR)");
  const NodeFacts f = gather({t.root(), false, ""});
  const std::string text = to_text(run(f), f);
  EXPECT_NE(text.find("mlx5_0:1 Ethernet ACTIVE: 10 Gb/s,"), std::string::npos) << text;
  EXPECT_EQ(text.find("QDR"), std::string::npos) << text;
  EXPECT_NE(text.find("mlx5_1:1 InfiniBand ACTIVE: 400 Gb/s (4X NDR)"), std::string::npos) << text;
}

namespace {

// An NVIDIA GPU (class 0x0302, a 3D controller, as an H100) at `address` behind root port 0000:00:01.0,
// listed in bus/pci/devices as the kernel lists it (a link to its folder under devices/).
std::string gpu(const FabricTree& t, const std::string& address, const std::string& cls = "0x030200",
                const std::string& vendor = "0x10de") {
  const std::string dir = "devices/pci0000:00/0000:00:01.0/" + address;
  t.put(dir + "/vendor", vendor + "\n");
  t.put(dir + "/class", cls + "\n");
  const auto listed = std::filesystem::path(t.root()) / "bus/pci/devices";
  std::filesystem::create_directories(listed);
  std::filesystem::create_directory_symlink("../../../" + dir, listed / address);
  return dir;
}

// A node with full NIC links and these GPUs; the gpu_pcie section's findings and the whole report.
struct GpuRun {
  NodeFacts facts;
  Report report;
  const Section& section() const { return section_named(report, "gpu_pcie"); }
  int degraded() const {
    int n = 0;
    for (const auto& s : report.sections) n += count(s, "pcie.link_degraded");
    return n;
  }
};
GpuRun run_node(const FabricTree& t) {
  GpuRun g{gather({t.root(), false, ""}), {}};
  g.report = run(g.facts);
  return g;
}

}  // namespace

// The healthy twin: eight GPUs at x16 (a real idle H100 reads 2.5 GT/s of 32 GT/s), one at full speed.
// No finding of any kind in the section, the speed shown and said not to be judged.
TEST(DoctorGpuPcie, IdleGpuAtLowSpeedHasNoFinding) {
  FabricTree t("doctor-gpu-idle");
  testing_fixtures::healthy_ndr8(t);
  full_links(t);
  for (int i = 0; i < 8; ++i) {
    const std::string dir = gpu(t, fmt::format("0000:{:02x}:00.0", 0x18 + i));
    link(t, dir, "16", i == 0 ? "32.0 GT/s PCIe" : "2.5 GT/s PCIe", "16", "32.0 GT/s PCIe");
  }
  const GpuRun g = run_node(t);
  ASSERT_EQ(g.facts.gpu_links.size(), 8u);
  EXPECT_TRUE(g.section().findings.empty()) << diag::one_line(g.section().findings.at(0));
  EXPECT_EQ(g.degraded(), 0);
  const std::string text = to_text(g.report, g.facts);
  EXPECT_NE(text.find("GPU 0000:19:00.0  PCIe link x16 at 2.5 GT/s (capable of x16 at 32 GT/s); speed below "
                      "capability: GPUs lower it when idle, so it is not judged"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("GPU 0000:18:00.0  PCIe link x16 at 32 GT/s (capable of x16 at 32 GT/s)\n"),
            std::string::npos)
      << text;
  const auto j = to_json(g.report, g.facts)["sections"]["gpu_pcie"];
  EXPECT_EQ(j["count"], 8);
  EXPECT_EQ(j["gpus"][1]["pci_address"], "0000:19:00.0");
  EXPECT_EQ(j["gpus"][1]["pcie"]["speed_gts"], 2.5);
  EXPECT_EQ(j["gpus"][1]["pcie"]["speed_below_max"], true);
  EXPECT_EQ(j["gpus"][1]["pcie"]["narrower"], false);
}

// The same node with one GPU at 8 of its 16 lanes (idle speed as its siblings): one warning naming it.
TEST(DoctorGpuPcie, NarrowGpuLinkWarns) {
  FabricTree t("doctor-gpu-x8");
  testing_fixtures::healthy_ndr8(t);
  full_links(t);
  for (int i = 0; i < 8; ++i)
    link(t, gpu(t, fmt::format("0000:{:02x}:00.0", 0x18 + i)), i == 5 ? "8" : "16", "2.5 GT/s PCIe", "16",
         "32.0 GT/s PCIe");
  const GpuRun g = run_node(t);
  ASSERT_EQ(g.section().findings.size(), 1u);
  const auto& f = g.section().findings[0];
  EXPECT_EQ(f.id(), "pcie.link_degraded");
  EXPECT_EQ(f.severity, diag::Severity::Warning);
  EXPECT_NE(diag::one_line(f).find("GPU 0000:1d:00.0: PCIe link trained x8 at 2.5 GT/s, capable of x16 at 32 "
                                   "GT/s: 8 of 16 lanes"),
            std::string::npos)
      << diag::one_line(f);
  EXPECT_GE(g.report.exit_code, 1) << "at least a warning";
  EXPECT_EQ(to_json(g.report, g.facts)["sections"]["gpu_pcie"]["gpus"][5]["pcie"]["narrower"], true);
}

// A GPU without link attributes of its own: its upstream port's, healthy then narrow. Devices that are
// not NVIDIA GPUs are left out: an NVSwitch (a bridge), another vendor's display controller.
TEST(DoctorGpuPcie, UpstreamPortAndOnlyNvidiaDisplayControllers) {
  FabricTree t("doctor-gpu-upstream");
  testing_fixtures::healthy_ndr8(t);
  full_links(t);
  gpu(t, "0000:1b:00.0", "0x030000");  // VGA class, no link attributes of its own
  gpu(t, "0000:1c:00.0", "0x068000");  // NVSwitch: a bridge
  gpu(t, "0000:1d:00.0", "0x030000", "0x1a03");
  link(t, "devices/pci0000:00/0000:00:01.0", "16", "16.0 GT/s PCIe", "16", "16.0 GT/s PCIe");
  const node::Sysfs sysfs(t.root());
  EXPECT_EQ(node::nvidia_gpu_addresses(sysfs), std::vector<std::string>{"0000:1b:00.0"});
  EXPECT_EQ(node::count_nvidia_gpus(sysfs), 1);
  GpuRun g = run_node(t);
  ASSERT_EQ(g.facts.gpu_links.size(), 1u);
  ASSERT_TRUE(g.facts.gpu_links[0].link);
  EXPECT_EQ(g.facts.gpu_links[0].link->reported_by, "0000:00:01.0");
  EXPECT_TRUE(g.section().findings.empty());
  link(t, "devices/pci0000:00/0000:00:01.0", "4", "16.0 GT/s PCIe", "16", "16.0 GT/s PCIe");
  g = run_node(t);
  ASSERT_EQ(g.section().findings.size(), 1u);
  EXPECT_NE(diag::one_line(g.section().findings[0]).find("4 of 16 lanes"), std::string::npos);
  EXPECT_NE(to_text(g.report, g.facts).find("read at upstream port 0000:00:01.0"), std::string::npos);
}

// No GPU (the test bed's guests, a CPU node): said so, no finding.
TEST(DoctorGpuPcie, NoGpuIsSaidWithoutFinding) {
  FabricTree t("doctor-gpu-none");
  testing_fixtures::healthy_ndr8(t);
  const GpuRun g = run_node(t);
  EXPECT_TRUE(g.section().findings.empty());
  EXPECT_NE(to_text(g.report, g.facts).find("No NVIDIA GPU on the PCI bus."), std::string::npos);
  EXPECT_EQ(to_json(g.report, g.facts)["sections"]["gpu_pcie"]["count"], 0);
}
