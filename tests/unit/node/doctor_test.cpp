// SPDX-License-Identifier: Apache-2.0
// `railscope doctor` sections, exit status and renderings on hand-built node facts and a fake sysfs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "doctor.h"
#include "railscope/node/mtu.h"

namespace fs = std::filesystem;
using namespace railscope;
using namespace railscope::doctor;

namespace {

node::Port roce_port(int active_mtu, const std::string& netdev, int netdev_mtu, const char* ip) {
  node::Port p;
  p.number = 1;
  p.state = node::PortState::Active;
  p.phys_state = 5;
  p.link_layer = node::LinkLayer::Ethernet;
  p.active_mtu = active_mtu;
  p.max_mtu = 4096;
  p.gid_tbl_len = 1024;
  p.netdev = netdev;
  p.netdev_mtu = netdev_mtu;
  node::GidEntry ll{0, *node::Gid::parse("fe80::1"), node::GidType::RoceV2, netdev};
  node::GidEntry v4{1, *node::Gid::parse(ip), node::GidType::RoceV2, netdev};
  p.gids = {ll, v4};
  return p;
}

NodeFacts two_rxe(int mtu_a, int mtu_b) {
  NodeFacts f;
  for (auto [name, mtu, nd, ip] : {std::tuple{"rxe0", mtu_a, "vethA", "::ffff:10.0.0.1"},
                                   std::tuple{"rxe1", mtu_b, "vethB", "::ffff:10.0.0.2"}}) {
    node::Device d;
    d.name = name;
    d.pci_path = "virtual";
    d.is_virtual = true;
    d.ports.push_back(roce_port(node::roce_mtu_for_netdev(mtu), nd, mtu, ip));
    f.inventory.devices.push_back(d);
  }
  f.memlock.cap_ipc_lock = true;
  f.env = [](std::string_view) { return std::optional<std::string>(); };
  return f;
}

// Finding ids of the RDMA sections. The gpudirect section reads this host's PCI topology and CUDA
// driver, so it is checked against fixture topologies in tests/unit/gpu instead.
std::multiset<std::string> ids(const Report& r) {
  std::multiset<std::string> out;
  for (const auto& s : r.sections)
    if (s.name != "gpudirect")
      for (const auto& f : s.findings) out.emplace(f.id());
  return out;
}

}  // namespace

TEST(Doctor, SectionsInOrder) {
  std::vector<std::string> names;
  for (const auto& s : all_sections()) names.emplace_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"devices", "gpu_pcie", "gids", "mtu", "link", "memlock", "env",
                                             "gpudirect", "qos", "plugins"}));
}

TEST(Doctor, HealthyNodeExitsZero) {
  const auto f = two_rxe(9000, 9000);
  const Report r = run(f);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(ids(r).empty());
  const auto j = to_json(r, f);
  EXPECT_EQ(j["schema"], "railscope.doctor/1");
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["sections"]["gids"]["ports"][0]["selected_index"], 1);
  EXPECT_EQ(j["sections"]["mtu"]["ports"][0]["netdev_allows"], 4096);
  EXPECT_EQ(j["sections"]["devices"]["devices"][1]["ports"][0]["netdev"], "vethB");
}

TEST(Doctor, MtuMismatchWarns) {
  const auto f = two_rxe(9000, 1500);
  const Report r = run(f);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(ids(r), (std::multiset<std::string>{"mtu.mismatch", "mtu.small"}));
  const auto j = to_json(r, f);
  EXPECT_EQ(j["sections"]["mtu"]["min_active_mtu"], 1024);
  EXPECT_EQ(j["sections"]["mtu"]["max_active_mtu"], 4096);
  const std::string text = to_text(r, f);
  EXPECT_NE(text.find("a QP between these ports must use 1024"), std::string::npos) << text;
  EXPECT_NE(text.find("Status: warning (exit 1)"), std::string::npos) << text;
}

TEST(Doctor, NoDeviceIsAnError) {
  NodeFacts f;
  f.memlock.cap_ipc_lock = true;
  const Report r = run(f);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(ids(r), (std::multiset<std::string>{"device.none"}));
  EXPECT_NE(to_text(r, f).find("No RDMA device found."), std::string::npos);
}

TEST(Doctor, DownPortsAndMemlock) {
  auto f = two_rxe(1500, 1500);
  for (auto& d : f.inventory.devices) d.ports[0].state = node::PortState::Down;
  f.memlock.cap_ipc_lock = false;
  f.memlock.soft_bytes = f.memlock.hard_bytes = 64 << 10;
  const Report r = run(f);
  EXPECT_EQ(r.exit_code, 2);
  const auto got = ids(r);
  EXPECT_EQ(got.count("port.down"), 2u);
  EXPECT_EQ(got.count("port.none_active"), 1u);
  EXPECT_EQ(got.count("memlock.too_low"), 1u);
}

TEST(Doctor, HcaFilterSelectsNothing) {
  auto f = two_rxe(1500, 1500);
  f.hca = node::parse_hca_filter("mlx5");
  const Report r = run(f);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(ids(r), (std::multiset<std::string>{"device.filtered_out"}));
  EXPECT_TRUE(to_json(r, f)["sections"]["gids"]["ports"].empty());
}

TEST(Doctor, EnvOverridesAndForcedLinkLocal) {
  auto f = two_rxe(9000, 9000);
  f.env = [](std::string_view n) {
    return n == "NCCL_PROTO" ? std::optional<std::string>("LL128") : std::optional<std::string>();
  };
  f.gid_policy.forced_index = 0;
  const Report r = run(f);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(ids(r), (std::multiset<std::string>{"env.tuning_override", "gid.link_local", "gid.link_local"}));
  EXPECT_EQ(to_json(r, f)["sections"]["env"]["tuning_overrides"][0]["name"], "NCCL_PROTO");
}

TEST(Doctor, GathersFromFakeSysfs) {
  const fs::path root = fs::temp_directory_path() / ("railscope-doctor-" + std::to_string(::getpid()));
  fs::remove_all(root);
  auto put = [&](const std::string& rel, const std::string& content) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << content;
  };
  const std::string p = "class/infiniband/rxe0/ports/1/";
  put(p + "state", "1: DOWN\n");
  put(p + "phys_state", "3: Disabled\n");
  put(p + "link_layer", "Ethernet\n");
  put(p + "gids/0", "fe80:0000:0000:0000:0000:0000:0000:0001\n");
  put(p + "gids/1", "0000:0000:0000:0000:0000:ffff:0a00:0001\n");
  put(p + "gids/2", "0000:0000:0000:0000:0000:0000:0000:0000\n");
  put(p + "gid_attrs/types/0", "RoCE v2\n");
  put(p + "gid_attrs/types/1", "RoCE v2\n");
  put(p + "gid_attrs/ndevs/0", "eth9\n");
  put(p + "gid_attrs/ndevs/1", "eth9\n");
  put("class/net/eth9/mtu", "9000\n");
  const NodeFacts f = gather({root.string(), true, ""});
  fs::remove_all(root);
  const Report r = run(f);
  const auto j = to_json(r, f);
  EXPECT_EQ(j["libibverbs"], false);
  EXPECT_EQ(j["sections"]["devices"]["devices"][0]["pci_path"], "virtual");
  EXPECT_EQ(j["sections"]["devices"]["devices"][0]["ports"][0]["state"], "DOWN");
  EXPECT_TRUE(j["sections"]["devices"]["devices"][0]["ports"][0]["active_mtu"].is_null());
  EXPECT_EQ(j["sections"]["gids"]["ports"][0]["selected_index"], 1);
  EXPECT_EQ(j["sections"]["gids"]["ports"][0]["gid_tbl_len"], 3);
  EXPECT_EQ(j["sections"]["mtu"]["ports"][0]["verdict"], "unknown");
  EXPECT_EQ(ids(r).count("port.down"), 1u);
  EXPECT_EQ(r.exit_code, 2);  // the only port is down: port.none_active
}

TEST(Doctor, GidIndexOnInfinibandReportedOncePerPort) {
  NodeFacts f;
  node::Device d;
  d.name = "mlx5_0";
  node::Port p;
  p.number = 1;
  p.state = node::PortState::Active;
  p.link_layer = node::LinkLayer::InfiniBand;
  p.gid_tbl_len = 128;
  p.gids = {{0, *node::Gid::parse("fe80::2"), node::GidType::IB, ""}};
  d.ports.push_back(p);
  f.inventory.devices.push_back(d);
  f.memlock.cap_ipc_lock = true;
  f.gid_policy.forced_index = 3;
  f.env = [](std::string_view n) {
    return n == "NCCL_IB_GID_INDEX" ? std::optional<std::string>("3") : std::optional<std::string>();
  };
  const Report r = run(f);
  EXPECT_EQ(ids(r), (std::multiset<std::string>{"gid.forced_on_ib"}));
  EXPECT_EQ(r.exit_code, 0);  // information only: NCCL ignores it
  EXPECT_EQ(to_json(r, f)["sections"]["gids"]["ports"][0]["selected_index"], 0);
}
