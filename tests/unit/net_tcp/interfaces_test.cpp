// SPDX-License-Identifier: Apache-2.0
// Interface selection with NCCL's NCCL_SOCKET_IFNAME / NCCL_SOCKET_FAMILY rules, and what
// getProperties reports from sysfs (speed, default speed, PCI path, MTU) using a fake sysfs tree.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "plugin/net/tcp/interfaces.h"

namespace railscope::net::tcp {
namespace {

IfAddr addr(std::string name, int family = 4, bool loopback = false) {
  IfAddr a;
  a.name = std::move(name);
  a.family = family;
  a.loopback = loopback;
  a.addr[0] = family == 4 ? 10 : 0x20;
  return a;
}

std::vector<std::string> names(const std::vector<IfAddr>& v) {
  std::vector<std::string> out;
  for (const auto& a : v) out.push_back(a.name);
  return out;
}

using V = std::vector<std::string>;

std::vector<IfAddr> machine() {
  std::vector<IfAddr> all = {addr("lo", 4, true), addr("eth0"),   addr("eth0", 6), addr("eth1"),
                             addr("docker0"),     addr("virbr0"), addr("ens5")};
  IfAddr ll = addr("eth2", 6);
  ll.addr[0] = 0xfe;
  ll.addr[1] = 0x80;
  ll.link_local = true;
  all.push_back(ll);
  IfAddr down = addr("eth3");
  down.up = false;
  all.push_back(down);
  return all;
}

TEST(TcpInterfaces, FilterSyntax) {
  auto f = parse_ifname_filter("eth,ens");
  EXPECT_TRUE(f.matches("eth0"));
  EXPECT_TRUE(f.matches("ens5"));
  EXPECT_FALSE(f.matches("lo"));
  f = parse_ifname_filter("^eth");
  EXPECT_FALSE(f.matches("eth0"));
  EXPECT_TRUE(f.matches("ens5"));
  f = parse_ifname_filter("=eth0");
  EXPECT_TRUE(f.matches("eth0"));
  EXPECT_FALSE(f.matches("eth01"));
  f = parse_ifname_filter("^=eth0");
  EXPECT_FALSE(f.matches("eth0"));
  EXPECT_TRUE(f.matches("eth01"));
}

TEST(TcpInterfaces, DefaultSkipsLoopbackDockerVirbrLinkLocalAndDown) {
  EXPECT_EQ(names(select_interfaces(machine(), std::nullopt, 0)), (V{"eth0", "eth1", "ens5"}));
}

TEST(TcpInterfaces, DefaultPrefersIb) {
  auto all = machine();
  all.push_back(addr("ib0"));
  EXPECT_EQ(names(select_interfaces(all, std::nullopt, 0)), (V{"ib0"}));
}

TEST(TcpInterfaces, LoopbackOnlyWhenNamedOrAlone) {
  EXPECT_EQ(names(select_interfaces(machine(), std::string("lo"), 0)), (V{"lo"}));
  EXPECT_EQ(names(select_interfaces(machine(), std::string("^eth,ens,docker,virbr"), 0)), (V{"lo"}));
  EXPECT_EQ(names(select_interfaces(machine(), std::string("^docker"), 0)),
            (V{"eth0", "eth1", "virbr0", "ens5"}));
  EXPECT_EQ(names(select_interfaces({addr("lo", 4, true)}, std::nullopt, 0)), (V{"lo"}));
  EXPECT_EQ(names(select_interfaces({addr("lo", 4, true), addr("docker0")}, std::nullopt, 0)),
            (V{"docker0"}));
}

TEST(TcpInterfaces, ExactAndFamily) {
  EXPECT_EQ(names(select_interfaces(machine(), std::string("=eth"), 0)), (V{}));
  EXPECT_EQ(names(select_interfaces(machine(), std::string("=eth1"), 0)), (V{"eth1"}));
  auto v6 = select_interfaces(machine(), std::string("eth"), 6);
  ASSERT_EQ(names(v6), (V{"eth0"}));  // eth2's only IPv6 address is link-local
  EXPECT_EQ(v6[0].family, 6);
  std::string why;
  EXPECT_EQ(parse_family("AF_INET6", &why), 6);
  EXPECT_EQ(parse_family("", &why), 0);
  EXPECT_FALSE(parse_family("AF_UNIX", &why));
  EXPECT_NE(why.find("AF_UNIX"), std::string::npos);
}

TEST(TcpInterfaces, AtMostSixteen) {
  std::vector<IfAddr> many;
  for (int i = 0; i < 40; ++i) many.push_back(addr("eth" + std::to_string(i)));
  EXPECT_EQ(select_interfaces(many, std::nullopt, 0).size(), kMaxInterfaces);
}

TEST(TcpInterfaces, SysfsSpeedPciPathAndDefaults) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("rs-tcp-sysfs-" + std::to_string(getpid()));
  fs::create_directories(root / "class/net/eth0");
  fs::create_directories(root / "class/net/veth0");
  fs::create_directories(root / "devices/pci0000:00/0000:00:03.0");
  std::ofstream(root / "class/net/eth0/speed") << "25000\n";
  std::ofstream(root / "class/net/eth0/mtu") << "9000\n";
  fs::create_directory_symlink(root / "devices/pci0000:00/0000:00:03.0", root / "class/net/eth0/device");
  std::ofstream(root / "class/net/veth0/speed") << "-1\n";  // what virtual links without speed report
  ::setenv("RAILSCOPE_SYSFS_ROOT", root.c_str(), 1);
  NetInterface e = describe_interface(addr("eth0"));
  EXPECT_EQ(e.speed_mbps, 25000);
  EXPECT_EQ(e.mtu, 9000);
  EXPECT_EQ(e.pci_path, fs::canonical(root / "devices/pci0000:00/0000:00:03.0").string());
  NetInterface v = describe_interface(addr("veth0"));
  EXPECT_EQ(v.speed_mbps, kDefaultSpeedMbps);
  EXPECT_EQ(v.pci_path, "");
  NetInterface none = describe_interface(addr("nosuch"));
  EXPECT_EQ(none.speed_mbps, kDefaultSpeedMbps);
  ::unsetenv("RAILSCOPE_SYSFS_ROOT");
  fs::remove_all(root);
}

}  // namespace
}  // namespace railscope::net::tcp
