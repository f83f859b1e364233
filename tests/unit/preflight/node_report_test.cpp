// SPDX-License-Identifier: Apache-2.0
// Node reports as rank 0 reads them from the network (tools/preflight/node_report.h).
#include <gtest/gtest.h>

#include "node_report.h"

namespace railscope::preflight {
namespace {

NodeReport sample() {
  NodeReport r;
  r.rank = 1;
  r.host = "hostB";
  NicSummary n;
  n.device = "rxe1";
  n.state = "ACTIVE";
  n.link_layer = "Ethernet";
  n.netdev = "vethB0";
  n.active_mtu = 1024;
  n.speed_mbps = 10000;
  n.gid_type = "RoCE v2";
  n.gid_family = "AF_INET";
  n.ipv4 = "10.0.0.2";
  n.subnet = "10.0.0.0/24";
  r.nics = {n};
  r.nccl_env = {{"NCCL_IB_TC", "106"}};
  r.findings = {{"mtu.small", "warning", "rxe1:1 runs at 1024"}};
  r.doctor_exit = 1;
  return r;
}

TEST(NodeReport, RoundTrip) {
  std::string e;
  const auto back = node_report_from_json(to_json(sample()), &e);
  ASSERT_TRUE(back) << e;
  EXPECT_EQ(back->host, "hostB");
  EXPECT_EQ(back->nics.at(0).subnet, "10.0.0.0/24");
  EXPECT_EQ(back->nccl_env.at("NCCL_IB_TC"), "106");
  EXPECT_EQ(back->findings.at(0).id, "mtu.small");
  EXPECT_EQ(back->doctor_exit, 1);
}

TEST(NodeReport, EveryBadFieldIsRefusedAndNamed) {
  using J = nlohmann::json;
  struct Case {
    void (*spoil)(J&);
    const char* field;
  };
  const Case cases[] = {
      {[](J& j) { j = J::array(); }, "report"},
      {[](J& j) { j["schema"] = "railscope.preflight.node/2"; }, "schema"},
      {[](J& j) { j.erase("rank"); }, "rank: missing"},
      {[](J& j) { j["rank"] = -1; }, "rank: -1 is out of range"},
      {[](J& j) { j["rank"] = 1.5; }, "rank: not an integer"},
      {[](J& j) { j["rank"] = 18446744073709551615ULL; }, "rank:"},
      {[](J& j) { j["host"] = std::string(300, 'a'); }, "host: longer than"},
      {[](J& j) { j["host"] = "a\nb"; }, "host: control characters"},
      {[](J& j) { j["host"] = ""; }, "host: empty"},
      {[](J& j) { j["doctor_exit"] = 3; }, "doctor_exit"},
      {[](J& j) { j["nics"] = J::object(); }, "nics: missing or not an array"},
      {[](J& j) {
         j["nics"] = J::array();
         for (int i = 0; i < 65; ++i) j["nics"].push_back(j["nics"].size());
       },
       "nics: more than 64"},
      {[](J& j) { j["nics"][0] = 7; }, "nics[0].: not an object"},
      {[](J& j) { j["nics"][0]["active_mtu"] = "4096"; }, "nics[0].active_mtu: not an integer"},
      {[](J& j) { j["nics"][0]["port"] = 0; }, "nics[0].port"},
      {[](J& j) { j["nics"][0].erase("subnet"); }, "nics[0].subnet: missing"},
      {[](J& j) { j["nics"][0]["device"] = ""; }, "nics[0].device: empty"},
      {[](J& j) { j["nccl_env"]["PATH"] = "/bin"; }, "nccl_env: a name"},
      {[](J& j) { j["nccl_env"]["NCCL_X"] = 1; }, "nccl_env.NCCL_X: not a string"},
      {[](J& j) { j["nccl_env"]["NCCL_X"] = std::string(256, 'x'); }, "nccl_env.NCCL_X: too long"},
      {[](J& j) {
         for (int i = 0; i < 129; ++i) j["nccl_env"]["NCCL_V" + std::to_string(i)] = "1";
       },
       "nccl_env: more than"},
      {[](J& j) { j["findings"][0]["severity"] = "fatal"; }, "findings[0].severity"},
      {[](J& j) { j["findings"][0]["detail"] = std::string(2000, 'd'); }, "findings[0].detail: longer"},
      {[](J& j) {
         j["findings"] = J::array();
         for (int i = 0; i < 129; ++i) j["findings"].push_back(J::object());
       },
       "findings: more than"},
  };
  for (const auto& c : cases) {
    J j = to_json(sample());
    c.spoil(j);
    std::string e;
    EXPECT_FALSE(node_report_from_json(j, &e)) << c.field;
    EXPECT_NE(e.find(c.field), std::string::npos) << "error '" << e << "' does not name " << c.field;
  }
}

TEST(NodeReport, NaturalOrder) {
  EXPECT_TRUE(natural_less("mlx5_2", "mlx5_10"));
  EXPECT_FALSE(natural_less("mlx5_10", "mlx5_2"));
  EXPECT_TRUE(natural_less("mlx5_2", "mlx5_2:1"));
  EXPECT_TRUE(natural_less("rxe0", "rxe1"));
  EXPECT_FALSE(natural_less("a", "a"));
  EXPECT_TRUE(natural_less("x02", "x3"));
  EXPECT_TRUE(natural_less("a99999999999999999999999", "a100000000000000000000000"));
}

}  // namespace
}  // namespace railscope::preflight
