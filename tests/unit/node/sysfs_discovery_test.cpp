// SPDX-License-Identifier: Apache-2.0
// Discovery against a fake sysfs tree built by the test, including odd content: empty files, garbage,
// directories where files should be (read errors), missing directories, odd port names.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "railscope/node/inventory.h"
#include "railscope/node/sysfs.h"

namespace fs = std::filesystem;
using namespace railscope::node;

namespace {

class FakeSysfs : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("railscope-sysfs-" + std::to_string(::getpid()) + "-" +
                                         testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void put(const std::string& rel, const std::string& content) {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << content;
  }
  void mkdir(const std::string& rel) { fs::create_directories(root_ / rel); }

  // An rxe-like RoCE device: fe80 at 0, IPv4-mapped at 1, empty entries up to `len`.
  void rxe(const std::string& dev, const std::string& netdev, const std::string& ip_hex, int mtu,
           int len = 16) {
    const std::string p = "class/infiniband/" + dev + "/ports/1/";
    put("class/infiniband/" + dev + "/node_guid", "b8a4:02ff:fe11:2233\n");
    put("class/infiniband/" + dev + "/sys_image_guid", "b8a4:02ff:fe11:2233\n");
    put(p + "state", "4: ACTIVE\n");
    put(p + "phys_state", "5: LinkUp\n");
    put(p + "link_layer", "Ethernet\n");
    put(p + "rate", "10 Gb/sec (1X QDR)\n");
    put(p + "lid", "0x0\n");
    for (int i = 0; i < len; ++i)
      put(p + "gids/" + std::to_string(i), "0000:0000:0000:0000:0000:0000:0000:0000\n");
    put(p + "gids/0", "fe80:0000:0000:0000:b8a4:02ff:fe11:2233\n");
    put(p + "gids/1", "0000:0000:0000:0000:0000:ffff:" + ip_hex + "\n");
    for (int i : {0, 1}) {
      put(p + "gid_attrs/types/" + std::to_string(i), "RoCE v2\n");
      put(p + "gid_attrs/ndevs/" + std::to_string(i), netdev + "\n");
    }
    put("class/net/" + netdev + "/mtu", std::to_string(mtu) + "\n");
  }

  fs::path root_;
};

}  // namespace

TEST_F(FakeSysfs, ReadsRxeLikeDevice) {
  rxe("rxe0", "vethA", "0a00:0001", 1500, 1024);
  const Inventory inv = discover({root_.string(), /*use_verbs=*/true});  // fake root: sysfs only
  EXPECT_FALSE(inv.used_verbs);
  ASSERT_EQ(inv.devices.size(), 1u);
  const Device& d = inv.devices[0];
  EXPECT_EQ(d.name, "rxe0");
  EXPECT_EQ(d.node_guid, "b8a4:02ff:fe11:2233");
  EXPECT_EQ(d.pci_path, "virtual");
  EXPECT_TRUE(d.is_virtual);
  ASSERT_EQ(d.ports.size(), 1u);
  const Port& p = d.ports[0];
  EXPECT_EQ(p.state, PortState::Active);
  EXPECT_EQ(p.phys_state, 5);
  EXPECT_EQ(p.link_layer, LinkLayer::Ethernet);
  EXPECT_EQ(p.speed_mbps, 10000);
  EXPECT_EQ(p.gid_tbl_len, 1024);
  ASSERT_EQ(p.gids.size(), 2u);  // empty entries skipped
  EXPECT_EQ(p.gids[1].index, 1);
  EXPECT_EQ(p.gids[1].gid.to_string(), "::ffff:10.0.0.1");
  EXPECT_EQ(p.gids[1].type, GidType::RoceV2);
  EXPECT_EQ(p.gids[1].netdev, "vethA");
  EXPECT_EQ(p.netdev, "vethA");
  EXPECT_EQ(p.netdev_mtu, 1500);
  EXPECT_EQ(p.active_mtu, 0);  // sysfs has no MTU: unknown, not invented
}

// A QP addresses its source GID with 8 bits: entries past index 255 of a longer table (rxe reports 1024)
// are not offered, the last usable one is.
TEST_F(FakeSysfs, GidEntriesPastIndex255AreNotRead) {
  rxe("rxe0", "vethA", "0a00:0001", 1500, 1024);
  const std::string p = "class/infiniband/rxe0/ports/1/";
  for (int i : {255, 256, 300}) {
    put(p + "gids/" + std::to_string(i),
        "0000:0000:0000:0000:0000:ffff:0a00:00" + std::to_string(i % 100 + 10) + "\n");
    put(p + "gid_attrs/types/" + std::to_string(i), "RoCE v2\n");
  }
  const Inventory inv = discover({root_.string(), false});
  ASSERT_EQ(inv.devices.size(), 1u);
  const Port& port = inv.devices[0].ports[0];
  ASSERT_EQ(port.gids.size(), 3u);
  EXPECT_EQ(port.gids[2].index, 255);
}

TEST_F(FakeSysfs, PciDeviceResolved) {
  rxe("mlx5_0", "eth0", "0a00:0005", 9000);
  mkdir("devices/pci0000:00/0000:00:02.0");
  put("devices/pci0000:00/0000:00:02.0/vendor", "0x15b3\n");
  put("devices/pci0000:00/0000:00:02.0/device", "0x1021\n");
  fs::create_directory_symlink(root_ / "devices/pci0000:00/0000:00:02.0",
                               root_ / "class/infiniband/mlx5_0/device");
  put("class/infiniband/mlx5_0/fw_ver", "28.39.1002\n");
  const Inventory inv = discover({root_.string(), false});
  ASSERT_EQ(inv.devices.size(), 1u);
  EXPECT_EQ(inv.devices[0].pci_path, "/sys/devices/pci0000:00/0000:00:02.0");
  EXPECT_FALSE(inv.devices[0].is_virtual);
  EXPECT_EQ(inv.devices[0].vendor, "0x15b3");
  EXPECT_EQ(inv.devices[0].fw_ver, "28.39.1002");
}

TEST_F(FakeSysfs, OddContentNeverCrashes) {
  const std::string p = "class/infiniband/odd0/ports/1/";
  put(p + "state", "banana");
  put(p + "phys_state", "");
  put(p + "link_layer", "\x01\x02\xff");
  put(p + "rate", "fast");
  put(p + "lid", "0xZZ");
  put(p + "gids/0", "garbage");
  put(p + "gids/1", "0000:0000:0000:0000:0000:ffff:0a00:0002");
  mkdir(p + "gid_attrs/types/1");  // reading a directory fails like a masked (EINVAL) attribute
  put(p + "gid_attrs/ndevs/1", "");
  put(p + "gids/x", "zz");
  mkdir("class/infiniband/odd0/ports/abc");
  mkdir("class/infiniband/noports0");
  put("class/infiniband/odd0/node_guid", "");
  const Inventory inv = discover({root_.string(), false});
  ASSERT_EQ(inv.devices.size(), 2u);
  const Device& noports = inv.devices[0];
  EXPECT_EQ(noports.name, "noports0");
  EXPECT_TRUE(noports.ports.empty());
  const Device& odd = inv.devices[1];
  ASSERT_EQ(odd.ports.size(), 1u);
  EXPECT_FALSE(odd.notes.empty());
  const Port& port = odd.ports[0];
  EXPECT_EQ(port.state, PortState::Unknown);
  EXPECT_EQ(port.phys_state, 0);
  EXPECT_EQ(port.link_layer, LinkLayer::Unknown);
  EXPECT_EQ(port.speed_mbps, 0);
  EXPECT_EQ(port.netdev_mtu, 0);
  ASSERT_EQ(port.gids.size(), 1u);
  EXPECT_EQ(port.gids[0].type, GidType::Unknown);
  EXPECT_EQ(port.gids[0].netdev, "");
}

TEST_F(FakeSysfs, NoDevices) {
  EXPECT_TRUE(discover({root_.string(), false}).devices.empty());
  EXPECT_TRUE(discover({(root_ / "does-not-exist").string(), false}).devices.empty());
}

TEST_F(FakeSysfs, RootFromEnvironment) {
  rxe("rxe0", "vethA", "0a00:0001", 9000);
  rxe("rxe1", "vethB", "0a00:0002", 1500);
  setenv("RAILSCOPE_SYSFS_ROOT", root_.c_str(), 1);
  const Inventory inv = discover();
  unsetenv("RAILSCOPE_SYSFS_ROOT");
  ASSERT_EQ(inv.devices.size(), 2u);
  EXPECT_EQ(inv.sysfs_root, root_.string());
  EXPECT_EQ(inv.devices[1].ports[0].netdev, "vethB");
  EXPECT_EQ(inv.devices[1].ports[0].netdev_mtu, 1500);
  EXPECT_EQ(inv.devices[0].ports[0].netdev_mtu, 9000);
}

TEST(SysfsParse, LeadingInt) {
  EXPECT_EQ(parse_leading_int("4: ACTIVE"), 4);
  EXPECT_EQ(parse_leading_int("1500"), 1500);
  EXPECT_EQ(parse_leading_int("0x15b3"), 0x15b3);
  EXPECT_EQ(parse_leading_int("12abc"), std::nullopt);
  EXPECT_EQ(parse_leading_int(""), std::nullopt);
  EXPECT_EQ(parse_leading_int("99999999999999999999999"), std::nullopt);
}

TEST(SysfsParse, RateAndSpeedTables) {
  EXPECT_EQ(mbps_from_rate_text("100 Gb/sec (4X EDR)"), 100000);
  EXPECT_EQ(mbps_from_rate_text("2.5 Gb/sec (1X SDR)"), 2500);
  EXPECT_EQ(mbps_from_rate_text("Gb/sec"), 0);
  EXPECT_EQ(mbps_from_rate_text("10 apples"), 0);
  EXPECT_EQ(width_from_ibv(2) * lane_mbps_from_ibv(32), 100000);    // 4X EDR
  EXPECT_EQ(width_from_ibv(16) * lane_mbps_from_ibv(128), 200000);  // 2X NDR
  EXPECT_EQ(lane_mbps_from_ibv(256), 200000);                       // XDR (active_speed_ex)
  EXPECT_EQ(width_from_ibv(3), 0);
  EXPECT_EQ(lane_mbps_from_ibv(3), 0);
}
