// SPDX-License-Identifier: Apache-2.0
// The net plugin's verbs engine reads the node through lib/node: its port and GID choice runs over
// node::discover's inventory (port_policy.h), so what NCCL is told (speed, netdev MTU, PCI path) is what
// lib/node read, below RAILSCOPE_SYSFS_ROOT; and the engine's init-time MTU lines have the level the
// catalogue gives them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "plugin/net/verbs/setup/discovery.h"
#include "plugin/net/verbs/setup/port_policy.h"
#include "railscope/node/inventory.h"

namespace fs = std::filesystem;
using namespace railscope;
using net::verbs::PortSelection;
using net::verbs::select_ports;

namespace {

node::GidEntry entry(node::GidIndex index, const char* text, node::GidType type, const char* netdev) {
  node::GidEntry e;
  e.index = index;
  e.gid = *node::Gid::parse(text);
  e.type = type;
  e.netdev = netdev;
  return e;
}

node::Port roce_port(int number, const char* netdev, int netdev_mtu) {
  node::Port p;
  p.number = number;
  p.state = node::PortState::Active;
  p.link_layer = node::LinkLayer::Ethernet;
  p.gid_tbl_len = 16;
  p.gids = {entry(0, "fe80::250:56ff:fe8f:1234", node::GidType::RoceV2, netdev),
            entry(1, "::ffff:10.0.0.1", node::GidType::RoceV2, netdev)};
  p.netdev = netdev;
  p.netdev_mtu = netdev_mtu;
  p.speed_mbps = 10000;
  return p;
}

node::Device device(const char* name, std::vector<node::Port> ports) {
  node::Device d;
  d.name = name;
  d.pci_path = "virtual";
  d.is_virtual = true;
  d.ports = std::move(ports);
  return d;
}

// An active InfiniBand port with its one GID at index 0.
node::Port ib_port(int number) {
  node::Port p;
  p.number = number;
  p.state = node::PortState::Active;
  p.link_layer = node::LinkLayer::InfiniBand;
  p.gid_tbl_len = 1;
  p.gids = {entry(0, "fe80::a288:c203:40:1234", node::GidType::IB, "")};
  return p;
}

PortSelection select(const node::Inventory& inv, const char* hca = "") {
  return select_ports(inv, node::parse_hca_filter(hca), node::GidPolicy{});
}

TEST(EngineSelection, PicksTheIpv4RoceV2GidAndCarriesLibNodeFacts) {
  node::Inventory inv;
  inv.devices.push_back(device("rxe0", {roce_port(1, "vethA", 1500)}));
  PortSelection s = select(inv);
  ASSERT_EQ(s.ports.size(), 1u);
  EXPECT_EQ(s.ports[0].dev_name, "rxe0");
  EXPECT_EQ(s.ports[0].gid_index, 1);
  EXPECT_EQ(s.ports[0].gid.to_string(), "::ffff:10.0.0.1");
  EXPECT_EQ(s.ports[0].gid_type, node::GidType::RoceV2);
  EXPECT_EQ(s.ports[0].netdev, "vethA");
  EXPECT_EQ(s.ports[0].netdev_mtu, 1500);
  EXPECT_EQ(s.ports[0].pci_path, "");  // virtual: NCCL gets no PCI path
  EXPECT_TRUE(s.findings.empty());
}

// What the engine reports to NCCL as the port speed (DeviceProps speed_mbps sums NetPort::speed_mbps,
// its node::PortRecord's) is lib/node's figure: an XDR port is not 0.
TEST(EngineSelection, SpeedIsLibNodesTableXdrIncluded) {
  node::Inventory inv;
  node::Port ib = ib_port(1);
  ib.speed_mbps = node::port_speed_mbps(/*4X*/ 2, /*active_speed*/ 0, /*XDR*/ 256);
  inv.devices.push_back(device("mlx5_0", {ib}));
  PortSelection s = select(inv);
  ASSERT_EQ(s.ports.size(), 1u);
  EXPECT_EQ(s.ports[0].speed_mbps, 800000);
  EXPECT_EQ(s.ports[0].link_layer, node::LinkLayer::InfiniBand);
}

// The record carries the inventory's MTU as the ibv_mtu the QP and the handshake use, and the LID an
// InfiniBand peer addresses; unknown stays 0.
TEST(EngineSelection, RecordCarriesMtuAndLid) {
  node::Inventory inv;
  node::Port ib = ib_port(2);
  ib.active_mtu = 4096;
  ib.lid = 0x2a;
  inv.devices.push_back(device("mlx5_0", {ib_port(1), ib}));
  PortSelection s = select(inv);
  ASSERT_EQ(s.ports.size(), 2u);
  EXPECT_EQ(s.ports[0].active_mtu, 0);
  EXPECT_EQ(s.ports[1].port, 2);
  EXPECT_EQ(s.ports[1].active_mtu, 4096);
  EXPECT_EQ(s.ports[1].lid, 0x2a);
  EXPECT_EQ(s.ports[1].gid_index, 0);
  EXPECT_TRUE(s.ports[1].pci_path.empty());  // a virtual device: no PCI path, not "virtual"
}

TEST(EngineSelection, FailuresNameWhy) {
  node::Inventory none;
  none.verbs_error = "ibv_get_device_list: No such device";
  PortSelection s = select(none);
  EXPECT_TRUE(s.ports.empty());
  EXPECT_EQ(s.failure.finding().id(), "device.none");
  EXPECT_NE(s.failure.finding().detail.find("No such device"), std::string::npos);

  node::Inventory inv;
  inv.devices.push_back(device("rxe0", {roce_port(1, "vethA", 1500)}));
  s = select(inv, "mlx5");
  EXPECT_EQ(s.failure.finding().id(), "device.filtered_out");
  EXPECT_EQ(s.failure.finding().detail, "NCCL_IB_HCA selects none of the 1 RDMA ports present");

  inv.devices[0].ports[0].state = node::PortState::Down;
  s = select(inv);
  EXPECT_EQ(s.failure.finding().id(), "port.down");
  EXPECT_EQ(s.failure.finding().detail, "no active RDMA port; inactive: rxe0:1");

  inv.devices[0].ports[0].state = node::PortState::Active;
  inv.devices[0].ports[0].gids.clear();
  s = select(inv);
  EXPECT_EQ(s.failure.finding().id(), "device.none");
  ASSERT_FALSE(s.findings.empty());
  EXPECT_EQ(s.findings[0].id(), "gid.none_usable");
}

TEST(EngineSelection, HcaFilterSelectsPorts) {
  node::Inventory inv;
  inv.devices.push_back(device("rxe0", {roce_port(1, "vethA", 1500)}));
  inv.devices.push_back(device("rxe1", {roce_port(1, "vethB", 9000)}));
  PortSelection s = select(inv, "=rxe1:1");
  ASSERT_EQ(s.ports.size(), 1u);
  EXPECT_EQ(s.ports[0].dev_name, "rxe1");
  EXPECT_EQ(s.ports[0].netdev_mtu, 9000);
  EXPECT_EQ(select(inv, "^rxe0").ports.size(), 1u);
}

class FakeNode : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("railscope-engine-sysfs-" + std::to_string(::getpid()) + "-" +
                                         testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override {
    ::unsetenv("RAILSCOPE_SYSFS_ROOT");
    fs::remove_all(root_);
  }
  void put(const std::string& rel, const std::string& content) {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << content;
  }
  fs::path root_;
};

// Every sysfs fact the engine uses (netdev MTU, PCI path, here of a NIC with a VLAN GID whose netdev
// is not the port's) comes from below RAILSCOPE_SYSFS_ROOT.
TEST_F(FakeNode, NetdevMtuAndPciPathFromSysfsRoot) {
  const std::string p = "class/infiniband/mlx5_0/ports/1/";
  put("class/infiniband/mlx5_0/node_guid", "b8a4:02ff:fe11:2233\n");
  put("class/infiniband/mlx5_0/sys_image_guid", "b8a4:02ff:fe11:2233\n");
  put(p + "state", "4: ACTIVE\n");
  put(p + "link_layer", "Ethernet\n");
  put(p + "rate", "100 Gb/sec (4X EDR)\n");
  put(p + "gids/0", "fe80:0000:0000:0000:b8a4:02ff:fe11:2233\n");
  put(p + "gids/1", "0000:0000:0000:0000:0000:ffff:0a00:0105\n");
  put(p + "gid_attrs/types/0", "RoCE v2\n");
  put(p + "gid_attrs/types/1", "RoCE v2\n");
  put(p + "gid_attrs/ndevs/0", "eth0\n");
  put(p + "gid_attrs/ndevs/1", "eth0.105\n");
  put("class/net/eth0/mtu", "9000\n");
  put("class/net/eth0.105/mtu", "4200\n");
  put("devices/pci0000:00/0000:00:02.0/vendor", "0x15b3\n");
  fs::create_directory_symlink(root_ / "devices/pci0000:00/0000:00:02.0",
                               root_ / "class/infiniband/mlx5_0/device");
  ::setenv("RAILSCOPE_SYSFS_ROOT", root_.c_str(), 1);
  const node::Inventory inv = node::discover();  // what discover_ports starts from
  PortSelection s = select(inv);
  ASSERT_EQ(s.ports.size(), 1u) << (s.failure.ok() ? "" : diag::one_line(s.failure.finding()));
  EXPECT_EQ(s.ports[0].gid_index, 1);
  EXPECT_EQ(s.ports[0].netdev, "eth0.105");
  EXPECT_EQ(s.ports[0].netdev_mtu, 4200);  // the selected GID's netdev, read below the root
  EXPECT_EQ(inv.devices[0].ports[0].netdev_mtu, 9000);
  EXPECT_EQ(s.ports[0].pci_path, "/sys/devices/pci0000:00/0000:00:02.0");
  EXPECT_EQ(s.ports[0].speed_mbps, 100000);
}

TEST(EnginePortMtu, LevelFollowsTheCatalogue) {
  using net::verbs::port_mtu_log;
  // The soft-RoCE test bed's healthy case: netdev MTU 1500, active_mtu 1024: information only.
  auto lines = port_mtu_log("rxe0:1", 1024, "vethA", 1500);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_FALSE(lines[0].warning);
  EXPECT_NE(lines[0].text.find("[mtu.small]"), std::string::npos) << lines[0].text;
  // active_mtu above what the netdev carries (error) and below it (warning) are warnings.
  lines = port_mtu_log("rxe0:1", 4096, "vethA", 1500);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].warning);
  EXPECT_NE(lines[0].text.find("[mtu.above_netdev]"), std::string::npos) << lines[0].text;
  lines = port_mtu_log("rxe0:1", 1024, "vethA", 9000);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].warning);
  EXPECT_NE(lines[0].text.find("[mtu.below_netdev]"), std::string::npos) << lines[0].text;
  EXPECT_TRUE(port_mtu_log("rxe0:1", 4096, "vethA", 9000).empty());
  EXPECT_TRUE(port_mtu_log("mlx5_0:1", 4096, "", 0).empty());  // InfiniBand: no netdev
}

}  // namespace
