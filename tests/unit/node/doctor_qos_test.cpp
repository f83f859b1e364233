// SPDX-License-Identifier: Apache-2.0
// `railscope doctor`'s qos section end to end on fake sysfs trees: gather() reads the inventory, the DCB
// fixtures (<root>/railscope-fixture/dcb/<if>), the mlx5 ECN files and rdma_cm's configfs, and the
// section renders text, JSON and findings.
//
// Where the layouts come from: the ConnectX-7 port is what `mlnx_qos -i <if> --trust dscp --pfc
// 0,0,0,1,0,0,0,0` leaves (the usual lossless RoCE setup in NVIDIA's RoCE configuration guides):
// `dcb pfc show dev <if>` pfc-cap 8 prio-pfc 3:on, `dcb app show dev <if> dscp-prio` all 64 entries with
// mlx5's default map DSCP d → priority d >> 3 (DSCP 26 → 3), ECN for RoCE enabled on priority 3 in
// /sys/class/net/<if>/ecn/roce_{np,rp}/enable/3 (NVIDIA MLNX_OFED "Explicit Congestion Notification"),
// and `cma_roce_tos -d mlx5_0 -t 106` in /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos.
// The rxe port stands for what the kernel answers for a veth: EOPNOTSUPP (no dcbnl_ops), no ECN files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "doctor.h"

namespace fs = std::filesystem;
using namespace railscope;
using namespace railscope::doctor;

namespace {

class DoctorQos : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("railscope-qos-" + std::to_string(::getpid()) + "-" +
                                         testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void put(const std::string& rel, const std::string& content) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << content;
  }

  // An active RoCE port of `dev` on `netdev` with an IPv4-mapped RoCE v2 GID at index 1.
  void roce_port(const std::string& dev, const std::string& netdev, int ip_last) {
    const std::string p = "class/infiniband/" + dev + "/ports/1/";
    put(p + "state", "4: ACTIVE\n");
    put(p + "phys_state", "5: LinkUp\n");
    put(p + "link_layer", "Ethernet\n");
    put(p + "gids/0", "fe80:0000:0000:0000:0000:0000:0000:0001\n");
    put(p + "gids/1", fmt_ip(ip_last));
    for (int i : {0, 1}) {
      put(p + "gid_attrs/types/" + std::to_string(i), "RoCE v2\n");
      put(p + "gid_attrs/ndevs/" + std::to_string(i), netdev + "\n");
    }
    put("class/net/" + netdev + "/mtu", "9000\n");
  }
  static std::string fmt_ip(int last) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "0000:0000:0000:0000:0000:ffff:0a00:%04x\n", last);
    return buf;
  }

  // The DCB answer of a ConnectX-7 netdev (see the file comment), with PFC on `pfc` and trust dscp or pcp.
  void cx7_dcb(const std::string& netdev, const std::string& pfc, bool trust_dscp = true) {
    std::string text =
        "# ConnectX-7 (mlx5_core), `dcb ieee show dev " + netdev + "` after mlnx_qos\nresult=ok\npfc_cap=8\n";
    text += "pfc_en=" + pfc + "\n";
    if (trust_dscp)
      for (int d = 0; d < 64; ++d)
        text += "app=dscp," + std::to_string(d) + "," + std::to_string(d >> 3) + "\n";
    text += "dcbx=host,cee,ieee\n";
    put("railscope-fixture/dcb/" + netdev, text);
  }
  void ecn(const std::string& netdev, int on_prio) {
    for (const char* point : {"roce_np", "roce_rp"})
      for (int p = 0; p < 8; ++p)
        put("class/net/" + netdev + "/ecn/" + point + "/enable/" + std::to_string(p),
            p == on_prio ? "1\n" : "0\n");
  }
  void cx7_port(const std::string& dev, const std::string& netdev, int ip_last,
                const std::string& pfc = "3") {
    roce_port(dev, netdev, ip_last);
    cx7_dcb(netdev, pfc);
    ecn(netdev, 3);
    put("kernel/config/rdma_cm/" + dev + "/ports/1/default_roce_tos", "106\n");
  }

  Report run_with(NodeFacts& f, std::map<std::string, std::string> env) {
    f.env = [env](std::string_view n) -> std::optional<std::string> {
      auto it = env.find(std::string(n));
      return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    return run(f);
  }
  static const Section& qos(const Report& r) {
    for (const auto& s : r.sections)
      if (s.name == "qos") return s;
    throw std::runtime_error("no qos section");
  }
  static std::multiset<std::string> ids(const Section& s) {
    std::multiset<std::string> out;
    for (const auto& f : s.findings) out.emplace(f.id());
    return out;
  }

  fs::path root_;
};

}  // namespace

TEST_F(DoctorQos, HealthyLosslessConnectX7) {
  cx7_port("mlx5_0", "eth2", 1);
  cx7_port("mlx5_1", "eth3", 2);
  NodeFacts f = gather({root_.string(), false, ""});
  const Report r = run_with(f, {{"NCCL_IB_TC", "106"}});
  const Section& s = qos(r);
  EXPECT_TRUE(s.findings.empty()) << diag::one_line(s.findings.front());
  const auto j = to_json(r, f)["sections"]["qos"];
  EXPECT_EQ(j["nccl_ib_tc"], 106);
  EXPECT_EQ(j["dscp"], 26);
  ASSERT_EQ(j["ports"].size(), 2u);
  const auto& p = j["ports"][0];
  EXPECT_EQ(p["device"], "mlx5_0");
  EXPECT_EQ(p["netdev"], "eth2");
  EXPECT_EQ(p["dcb"], "ok");
  EXPECT_EQ(p["trust"], "dscp");
  EXPECT_EQ(p["pfc_enabled"], nlohmann::json::array({3}));
  EXPECT_EQ(p["dscp_prio"]["26"], 3);
  EXPECT_EQ(p["roce_priority"], 3);
  EXPECT_EQ(p["pfc_on_roce_priority"], true);
  EXPECT_EQ(p["ecn"]["np"][3], true);
  EXPECT_EQ(p["ecn"]["rp"][0], false);
  EXPECT_EQ(p["ecn_on_roce_priority"], true);
  EXPECT_EQ(p["default_roce_tos"], 106);
  EXPECT_EQ(p["dcbx"], "host,cee,ieee");
  EXPECT_EQ(p["verdict"], "lossless");
  const std::string text = to_text(r, f);
  EXPECT_NE(text.find("RoCE QoS (PFC, ECN, DSCP)\n  NCCL_IB_TC 106 → DSCP 26\n"), std::string::npos) << text;
  EXPECT_NE(
      text.find("mlx5_0:1 (eth2): lossless — trust dscp, DSCP 26 → priority 3 (dscp-prio map); PFC on 3; "
                "ECN on for priority 3; DCBX host,cee,ieee; rdma_cm default ToS 106"),
      std::string::npos)
      << text;
}

TEST_F(DoctorQos, PfcOnThreeButNcclOnPriorityZero) {
  cx7_port("mlx5_0", "eth2", 1);
  NodeFacts f = gather({root_.string(), false, ""});
  const Report r = run_with(f, {});  // NCCL_IB_TC unset: traffic class 0 → DSCP 0 → priority 0
  const Section& s = qos(r);
  EXPECT_EQ(ids(s), (std::multiset<std::string>{"qos.pfc_off_for_roce", "qos.ecn_off_for_roce"}));
  EXPECT_GE(r.exit_code, 1);
  const auto j = to_json(r, f);
  EXPECT_TRUE(j["sections"]["qos"]["nccl_ib_tc"].is_null());
  EXPECT_EQ(j["sections"]["qos"]["ports"][0]["roce_priority"], 0);
  EXPECT_EQ(j["sections"]["qos"]["ports"][0]["verdict"], "lossy");
  bool found = false;
  for (const auto& fj : j["findings"])
    if (fj["id"] == "qos.pfc_off_for_roce") {
      found = true;
      EXPECT_EQ(fj["section"], "qos");
      EXPECT_EQ(fj["severity"], "warning");
      EXPECT_NE(fj["fix"].get<std::string>().find("Set NCCL_IB_TC=104"), std::string::npos) << fj["fix"];
    }
  EXPECT_TRUE(found);
  EXPECT_NE(to_text(r, f).find("NCCL_IB_TC unset: traffic class 0 (NCCL's default) → DSCP 0"),
            std::string::npos);
}

TEST_F(DoctorQos, TwoPortsDisagree) {
  cx7_port("mlx5_0", "eth2", 1);
  cx7_port("mlx5_1", "eth3", 2);
  cx7_dcb("eth3", "3", /*trust_dscp=*/false);  // the second port was left at the default trust pcp
  NodeFacts f = gather({root_.string(), false, ""});
  const Report r = run_with(f, {{"NCCL_IB_TC", "106"}});
  const Section& s = qos(r);
  EXPECT_EQ(ids(s), (std::multiset<std::string>{"qos.pfc_off_for_roce", "qos.ecn_off_for_roce",
                                                "qos.ports_disagree"}));
  const auto j = to_json(r, f)["sections"]["qos"]["ports"];
  EXPECT_EQ(j[0]["verdict"], "lossless");
  EXPECT_EQ(j[1]["trust"], "pcp");
  EXPECT_EQ(j[1]["verdict"], "lossy");
  for (const auto& fi : s.findings) {
    if (fi.id() == "qos.ports_disagree") {
      EXPECT_NE(fi.detail.find("trust mode, RoCE priority differ"), std::string::npos) << fi.detail;
    }
  }
}

TEST_F(DoctorQos, SoftRoceIsNotAvailableNeverAWarning) {
  roce_port("rxe0", "vethA", 1);
  roce_port("rxe1", "vethB", 2);
  for (const char* netdev : {"vethA", "vethB"})
    put(std::string("railscope-fixture/dcb/") + netdev,
        "# a veth has no dcbnl_ops: dcb_doit answers -EOPNOTSUPP\nresult=EOPNOTSUPP\n");
  NodeFacts f = gather({root_.string(), false, ""});
  const Report r = run_with(f, {{"NCCL_IB_TC", "106"}});
  const Section& s = qos(r);
  EXPECT_TRUE(s.findings.empty());
  const auto j = to_json(r, f)["sections"]["qos"]["ports"];
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["dcb"], "not_supported");
  EXPECT_EQ(j[0]["verdict"], "not available");
  EXPECT_TRUE(j[0]["default_roce_tos"].is_null());
  EXPECT_TRUE(j[0]["ecn"]["np"][3].is_null());
  EXPECT_NE(to_text(r, f).find("rxe0:1 (vethA): not available on this device: the device has no DCB support"),
            std::string::npos)
      << to_text(r, f);
}

TEST_F(DoctorQos, HcaFilterAndBadTrafficClass) {
  cx7_port("mlx5_0", "eth2", 1);
  cx7_port("mlx5_1", "eth3", 2, "4");  // would disagree, but NCCL_IB_HCA leaves it out
  NodeFacts f = gather({root_.string(), false, ""});
  f.hca = node::parse_hca_filter("mlx5_0");
  const Report r = run_with(f, {{"NCCL_IB_TC", "abc"}});
  const Section& s = qos(r);
  // The bad value is named and NCCL's default (0 → priority 0, no PFC) is judged.
  EXPECT_EQ(ids(s),
            (std::multiset<std::string>{"config.bad_env", "qos.pfc_off_for_roce", "qos.ecn_off_for_roce"}));
  EXPECT_EQ(to_json(r, f)["sections"]["qos"]["ports"].size(), 1u);
}
