// SPDX-License-Identifier: Apache-2.0
// NCCL-style path classes over synthetic hwloc topologies (tests/unit/gpu/fixtures).
#include <gtest/gtest.h>

#include <cstdlib>

#include "fake_sysfs.h"
#include "railscope/gpu/pci_topology.h"

namespace railscope::gpu {
namespace {

using testing::fixture;

PciTopology load_or_die(const std::string& name, const std::vector<NicHint>& hints = {}) {
  std::string error;
  auto t = PciTopology::load(fixture(name), hints, &error);
  if (!t) ADD_FAILURE() << error;
  return std::move(*t);
}

size_t index_of(const std::vector<PciDevice>& devs, const std::string& bdf) {
  for (size_t i = 0; i < devs.size(); ++i)
    if (devs[i].bdf == bdf) return i;
  ADD_FAILURE() << bdf << " not found";
  return 0;
}

TEST(PciTopology, DgxFindsGpusAndRdmaNicsOnly) {
  auto t = load_or_die("dgx.xml");
  ASSERT_EQ(t.gpus().size(), 4u);
  EXPECT_EQ(t.gpus()[0].bdf, "0000:03:00.0");
  EXPECT_EQ(t.gpus()[0].numa, 0);
  EXPECT_EQ(t.gpus()[3].bdf, "0000:83:00.0");
  EXPECT_EQ(t.gpus()[3].numa, 1);
  // The Intel 1GbE (class 0x0200, no openfabrics device) is not an RDMA NIC.
  ASSERT_EQ(t.nics().size(), 2u);
  EXPECT_EQ(t.nics()[0].name, "mlx5_0");
  EXPECT_EQ(t.nics()[0].bdf, "0000:04:00.0");
  EXPECT_EQ(t.nics()[1].name, "mlx5_1");
  EXPECT_EQ(t.nics()[1].netdevs, std::vector<std::string>{"eth1"});
  EXPECT_EQ(t.source(), fixture("dgx.xml"));
}

struct PathCase {
  const char* gpu;
  const char* nic;
  PathType type;
  const char* via;
};

class DgxPaths : public ::testing::TestWithParam<PathCase> {};

TEST_P(DgxPaths, ClassifiedAsNcclDoes) {
  auto t = load_or_die("dgx.xml");
  const auto& c = GetParam();
  auto p = t.path(index_of(t.gpus(), c.gpu), index_of(t.nics(), c.nic));
  EXPECT_EQ(p.type, c.type) << c.gpu << " -> " << c.nic << " gave " << to_string(p.type);
  EXPECT_EQ(p.via, c.via);
}

INSTANTIATE_TEST_SUITE_P(Fixture, DgxPaths,
                         ::testing::Values(
                             // GPU and NIC on two downstream ports of one switch
                             PathCase{"0000:03:00.0", "0000:04:00.0", PathType::Pix, "switch 0000:01:00.0"},
                             // GPU behind a second-level switch, NIC on the top switch
                             PathCase{"0000:07:00.0", "0000:04:00.0", PathType::Pxb, "switch 0000:01:00.0"},
                             // GPU on its own root port of the same CPU
                             PathCase{"0000:10:00.0", "0000:04:00.0", PathType::Phb, "host bridge, NUMA 0"},
                             // across sockets
                             PathCase{"0000:03:00.0", "0000:84:00.0", PathType::Sys, "NUMA 0 <-> NUMA 1"},
                             PathCase{"0000:83:00.0", "0000:04:00.0", PathType::Sys, "NUMA 1 <-> NUMA 0"},
                             PathCase{"0000:83:00.0", "0000:84:00.0", PathType::Pix, "switch 0000:81:00.0"}));

TEST(PciTopology, SwitchPortsListedForAcsOnlyInsideSwitches) {
  auto t = load_or_die("dgx.xml");
  auto pix = t.path(index_of(t.gpus(), "0000:03:00.0"), 0);
  EXPECT_EQ(pix.switch_ports, (std::vector<std::string>{"0000:01:00.0", "0000:02:00.0", "0000:02:01.0"}));
  auto pxb = t.path(index_of(t.gpus(), "0000:07:00.0"), 0);
  EXPECT_EQ(pxb.switch_ports, (std::vector<std::string>{"0000:01:00.0", "0000:02:01.0", "0000:02:02.0",
                                                        "0000:05:00.0", "0000:06:00.0"}));
  EXPECT_TRUE(t.path(index_of(t.gpus(), "0000:10:00.0"), 0).switch_ports.empty());
  EXPECT_TRUE(t.path(0, 1).switch_ports.empty());
}

TEST(PciTopology, BroadcomGen4SubSwitchesAreFlattenedLikeNccl) {
  // Without flattening GPU→sub-switch→switch→sub-switch→NIC would be PXB.
  auto t = load_or_die("bcm_gen4.xml");
  ASSERT_EQ(t.gpus().size(), 1u);
  ASSERT_EQ(t.nics().size(), 1u);
  auto p = t.path(0, 0);
  EXPECT_EQ(p.type, PathType::Pix);
  EXPECT_EQ(p.via, "switch 0000:01:00.0");
}

TEST(PciTopology, SingleGpuHasNoNic) {
  auto t = load_or_die("single_gpu.xml");
  EXPECT_EQ(t.gpus().size(), 1u);
  EXPECT_TRUE(t.nics().empty());
}

TEST(PciTopology, NodeHintNamesAndAddsANic) {
  // lib/node knows the Intel port as an RDMA device (e.g. irdma): the hint makes it a NIC.
  auto t = load_or_die("single_gpu.xml", {{"irdma0", "/sys/devices/pci0000:00/0000:00:03.0/0000:02:00.0"}});
  ASSERT_EQ(t.nics().size(), 1u);
  EXPECT_EQ(t.nics()[0].name, "irdma0");
  EXPECT_EQ(t.path(0, 0).type, PathType::Phb);
}

TEST(PciTopology, BadFileIsAClearError) {
  std::string error;
  EXPECT_FALSE(PciTopology::load("/nonexistent/topo.xml", {}, &error));
  EXPECT_NE(error.find("/nonexistent/topo.xml"), std::string::npos) << error;
  testing::FakeSysfs dir;
  dir.write("/bad.xml", "<topology><object type=\"Machine\"");
  error.clear();
  EXPECT_FALSE(PciTopology::load(dir.root() + "/bad.xml", {}, &error));
  EXPECT_FALSE(error.empty());
}

TEST(PciTopology, SystemTopologyLoads) {
  std::string error;
  auto t = PciTopology::load("", {}, &error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->source(), "system");
}

TEST(PciTopology, FileFromArgumentThenEnvironment) {
  setenv("RAILSCOPE_TOPO_FILE", "/env/topo.xml", 1);
  EXPECT_EQ(topology_file_from("/arg/topo.xml"), "/arg/topo.xml");
  EXPECT_EQ(topology_file_from(""), "/env/topo.xml");
  unsetenv("RAILSCOPE_TOPO_FILE");
  EXPECT_EQ(topology_file_from(""), "");
}

}  // namespace
}  // namespace railscope::gpu
