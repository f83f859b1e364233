// SPDX-License-Identifier: Apache-2.0
// doctor's devices section: each NIC's PCIe link against its capability (pcie.link_degraded), its part
// name, and the link section's Ethernet ports in Gb/s without InfiniBand rate names.
#include <gtest/gtest.h>

#include <filesystem>

#include "doctor.h"
#include "fabric_fixtures.h"
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
