// SPDX-License-Identifier: Apache-2.0
// NCCL_IB_TC → DSCP → priority, the per-port verdict and the qos.* findings, on DCB states shaped like
// ConnectX-6/7 ports configured with mlnx_qos/dcb (trust dscp, DSCP d → priority d >> 3, PFC on 3).
#include <gtest/gtest.h>

#include <map>

#include "railscope/node/qos.h"

using namespace railscope;
using namespace railscope::node;

namespace {

// `mlnx_qos -i <if> --trust dscp --pfc 0,0,0,1,0,0,0,0` on ConnectX-7: all 64 DSCP entries, d → d >> 3.
DcbState cx7(uint8_t pfc_en, bool trust_dscp = true) {
  DcbState s;
  s.status = DcbStatus::Ok;
  s.pfc_cap = 8;
  s.pfc_en = pfc_en;
  s.dcbx = 0x09;
  if (trust_dscp)
    for (uint16_t d = 0; d < 64; ++d) s.apps.push_back({kAppSelDscp, static_cast<uint8_t>(d >> 3), d});
  return s;
}

RoceEcn ecn_on(int prio, bool np = true, bool rp = true) {
  RoceEcn e;
  for (size_t p = 0; p < kPriorities; ++p) e.np[p] = e.rp[p] = false;
  e.np[static_cast<size_t>(prio)] = np;
  e.rp[static_cast<size_t>(prio)] = rp;
  return e;
}

PortQos port(const std::string& dev, const std::string& netdev, DcbState dcb, RoceEcn ecn) {
  return {dev, 1, netdev, std::move(dcb), ecn, std::nullopt};
}

NcclTraffic tc(int traffic_class) { return {true, traffic_class, 0}; }

std::multiset<std::string> ids(const QosReport& r) {
  std::multiset<std::string> out;
  for (const auto& f : r.findings) out.emplace(f.id());
  return out;
}

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](std::string_view n) -> std::optional<std::string> {
    auto it = vars.find(std::string(n));
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

}  // namespace

TEST(QosPriority, TrafficClassToDscpToPriority) {
  EXPECT_EQ(tc(106).dscp(), 26);
  EXPECT_EQ(tc(104).dscp(), 26);
  const auto p = roce_priority(cx7(0x08), tc(106));
  EXPECT_EQ(p.priority, 3);
  EXPECT_EQ(p.how, "DSCP 26 → priority 3 (dscp-prio map)");
  EXPECT_EQ(roce_priority(cx7(0x08), NcclTraffic{}).priority, 0);  // NCCL's default TC 0 → DSCP 0
  // Trust pcp: the PCP is NCCL_IB_SL.
  EXPECT_EQ(trust_of(cx7(0x08, false)), Trust::Pcp);
  EXPECT_EQ(roce_priority(cx7(0x08, false), tc(106)).priority, 0);
  EXPECT_EQ(roce_priority(cx7(0x08, false), NcclTraffic{true, 106, 3}).priority, 3);
  // Trust dscp without an entry for NCCL's DSCP: cannot say.
  DcbState sparse;
  sparse.status = DcbStatus::Ok;
  sparse.apps = {{kAppSelDscp, 3, 24}};
  EXPECT_FALSE(roce_priority(sparse, tc(106)).priority.has_value());
  EXPECT_EQ(trust_of(DcbState{}), Trust::Unknown);
}

TEST(QosPriority, TrafficFromEnv) {
  std::vector<diag::Finding> problems;
  auto t = nccl_traffic_from_env(env_of({{"NCCL_IB_TC", "106"}, {"NCCL_IB_SL", "11"}}), &problems);
  EXPECT_TRUE(t.tc_set);
  EXPECT_EQ(t.traffic_class, 106);
  EXPECT_EQ(t.service_level, 3);  // SL 11 → PCP 3 (three bits)
  EXPECT_TRUE(problems.empty());
  t = nccl_traffic_from_env(env_of({{"NCCL_IB_TC", "-1"}}), &problems);
  EXPECT_FALSE(t.tc_set);
  EXPECT_EQ(t.traffic_class, 0);
  t = nccl_traffic_from_env(env_of({{"NCCL_IB_TC", "300"}, {"NCCL_IB_SL", "x"}}), &problems);
  EXPECT_FALSE(t.tc_set);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].id(), "config.bad_env");
  EXPECT_NE(problems[0].detail.find("NCCL_IB_TC=300"), std::string::npos);
}

TEST(QosVerdict, HealthyLosslessConnectX7HasNoFinding) {
  const std::vector<PortQos> ports = {port("mlx5_0", "eth2", cx7(0x08), ecn_on(3)),
                                      port("mlx5_1", "eth3", cx7(0x08), ecn_on(3))};
  const auto r = evaluate_qos(ports, tc(106));
  EXPECT_TRUE(r.findings.empty()) << diag::one_line(r.findings.front());
  ASSERT_EQ(r.ports.size(), 2u);
  EXPECT_EQ(r.ports[0].verdict, Lossiness::Lossless);
  EXPECT_EQ(r.ports[0].where, "mlx5_0:1");
  EXPECT_EQ(r.ports[0].pfc_on, true);
  EXPECT_EQ(r.ports[0].ecn_on, true);
}

TEST(QosVerdict, DefaultTrafficClassMissesThePfcPriority) {
  const std::vector<PortQos> ports = {port("mlx5_0", "eth2", cx7(0x08), ecn_on(3))};
  const auto r = evaluate_qos(ports, NcclTraffic{});
  EXPECT_EQ(r.ports[0].verdict, Lossiness::Lossy);
  EXPECT_EQ(ids(r), (std::multiset<std::string>{"qos.pfc_off_for_roce", "qos.ecn_off_for_roce"}));
  const auto& pfc = r.findings[0];
  EXPECT_EQ(pfc.severity, diag::Severity::Warning);
  EXPECT_NE(pfc.detail.find("is on priority 0; PFC is on priority 3"), std::string::npos) << pfc.detail;
  EXPECT_NE(pfc.fix.find("Set NCCL_IB_TC=104 (DSCP 26 → priority 3"), std::string::npos) << pfc.fix;
  EXPECT_NE(r.findings[1].fix.find("/sys/class/net/eth2/ecn/roce_np/enable/0"), std::string::npos);
}

TEST(QosVerdict, SemiLosslessIsInformationLossyIsAWarning) {
  // No PFC anywhere, ECN on for NCCL's priority: semi-lossless by design, said as info.
  auto r = evaluate_qos({port("mlx5_0", "eth2", cx7(0x00), ecn_on(3))}, tc(106));
  EXPECT_EQ(r.ports[0].verdict, Lossiness::SemiLossless);
  ASSERT_EQ(ids(r), (std::multiset<std::string>{"qos.pfc_off_for_roce"}));
  EXPECT_EQ(r.findings[0].severity, diag::Severity::Info);
  EXPECT_NE(r.findings[0].fix.find("prio-pfc 3:on"), std::string::npos) << r.findings[0].fix;
  EXPECT_NE(r.findings[0].fix.find("--pfc 0,0,0,1,0,0,0,0"), std::string::npos) << r.findings[0].fix;
  // Neither PFC nor ECN (only the reaction point is on): lossy, both findings are warnings.
  r = evaluate_qos({port("mlx5_0", "eth2", cx7(0x00), ecn_on(3, false, true))}, tc(106));
  EXPECT_EQ(r.ports[0].verdict, Lossiness::Lossy);
  EXPECT_EQ(ids(r), (std::multiset<std::string>{"qos.pfc_off_for_roce", "qos.ecn_off_for_roce"}));
  for (const auto& f : r.findings) EXPECT_EQ(f.severity, diag::Severity::Warning);
  // PFC on but ECN unknown (inbox driver, no ecn files): lossless, nothing to say about ECN.
  r = evaluate_qos({port("mlx5_0", "eth2", cx7(0x08), RoceEcn{})}, tc(106));
  EXPECT_EQ(r.ports[0].verdict, Lossiness::Lossless);
  EXPECT_TRUE(r.findings.empty());
}

TEST(QosVerdict, TrustPcpWithPfcOnThree) {
  const auto r = evaluate_qos({port("mlx5_0", "eth2", cx7(0x08, false), ecn_on(3))}, tc(106));
  EXPECT_EQ(r.ports[0].trust, Trust::Pcp);
  EXPECT_EQ(r.ports[0].priority.priority, 0);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_NE(r.findings[0].fix.find("--trust dscp"), std::string::npos) << r.findings[0].fix;
  EXPECT_NE(r.findings[0].fix.find("NCCL_IB_SL=3"), std::string::npos) << r.findings[0].fix;
}

TEST(QosVerdict, PortsThatDisagree) {
  auto other = cx7(0x10);  // PFC on 4, and DSCP 26 remapped to 4
  for (auto& a : other.apps)
    if (a.protocol == 26) a.priority = 4;
  const std::vector<PortQos> ports = {port("mlx5_0", "eth2", cx7(0x08), ecn_on(3)),
                                      port("mlx5_1", "eth3", other, ecn_on(4))};
  const auto r = evaluate_qos(ports, tc(106));
  EXPECT_EQ(r.ports[1].verdict, Lossiness::Lossless);  // each is lossless on its own
  ASSERT_EQ(ids(r), (std::multiset<std::string>{"qos.ports_disagree"}));
  const auto& d = r.findings[0].detail;
  EXPECT_NE(d.find("PFC priorities, RoCE priority differ"), std::string::npos) << d;
  EXPECT_NE(d.find("mlx5_1:1 (eth3): trust dscp, PFC on 4, RoCE priority 4"), std::string::npos) << d;
  EXPECT_EQ(d.find("trust mode"), std::string::npos) << d;

  // Trust differs too; and rdma_cm's default ToS when both are known.
  auto a = port("mlx5_0", "eth2", cx7(0x08), ecn_on(3));
  auto b = port("mlx5_1", "eth3", cx7(0x08, false), ecn_on(3));
  a.default_roce_tos = 106;
  b.default_roce_tos = 0;
  const auto r2 = evaluate_qos({a, b}, NcclTraffic{true, 106, 3});  // SL 3: both on priority 3
  ASSERT_EQ(ids(r2), (std::multiset<std::string>{"qos.ports_disagree"}));
  EXPECT_NE(r2.findings[0].detail.find("trust mode, rdma_cm default ToS differ"), std::string::npos)
      << r2.findings[0].detail;
}

TEST(QosVerdict, NotAvailableIsNeitherWarningNorDisagreement) {
  DcbState veth;
  veth.status = DcbStatus::NotSupported;
  veth.reason = "the device has no DCB support (EOPNOTSUPP)";
  const std::vector<PortQos> ports = {port("rxe0", "vethA", veth, RoceEcn{}),
                                      port("mlx5_0", "eth2", cx7(0x08), ecn_on(3))};
  const auto r = evaluate_qos(ports, tc(106));
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.ports[0].verdict, Lossiness::NotAvailable);
  EXPECT_EQ(r.ports[0].reason, "not available on this device: the device has no DCB support (EOPNOTSUPP)");
  EXPECT_EQ(to_string(r.ports[0].verdict), "not available");
  DcbState unread;
  unread.reason = "DCB netlink request failed: Operation not permitted";
  const auto u = evaluate_qos({port("mlx5_0", "eth2", unread, RoceEcn{})}, tc(106));
  EXPECT_EQ(u.ports[0].verdict, Lossiness::Unknown);
  EXPECT_TRUE(u.findings.empty());
}
