// SPDX-License-Identifier: Apache-2.0
// RoCE QoS: for each selected RoCE port, NCCL_IB_TC → DSCP → priority through the netdev's trust mode
// and DSCP map, PFC on that priority, ECN for RoCE on it, rdma_cm's default ToS, and the verdict
// (lossless, semi-lossless, lossy; "not available on this device" where DCB is not supported, e.g. veth
// under rxe). The rules live in lib/node (qos.h); docs/roce-qos.md explains them.
#include <fmt/format.h>

#include "doctor.h"

namespace railscope::doctor {
namespace {

nlohmann::json optional_json(const std::optional<bool>& b) {
  return b ? nlohmann::json(*b) : nlohmann::json(nullptr);
}

nlohmann::json port_json(const node::PortQos& q, const node::PortQosVerdict& v) {
  nlohmann::json pfc = nullptr;
  if (q.dcb.pfc_en) {
    pfc = nlohmann::json::array();
    for (int p = 0; p < node::kPriorities; ++p)
      if ((*q.dcb.pfc_en >> p) & 1u) pfc.push_back(p);
  }
  nlohmann::json dscp_prio = nlohmann::json::object();
  nlohmann::json apps = nlohmann::json::array();
  for (const auto& a : q.dcb.apps) {
    if (a.selector == node::kAppSelDscp)
      dscp_prio[std::to_string(a.protocol)] = a.priority;
    else
      apps.push_back({{"selector", node::app_selector_text(a.selector)},
                      {"protocol", a.protocol},
                      {"priority", a.priority}});
  }
  nlohmann::json np = nlohmann::json::array();
  nlohmann::json rp = nlohmann::json::array();
  for (size_t p = 0; p < node::kPriorities; ++p) {
    np.push_back(optional_json(q.ecn.np[p]));
    rp.push_back(optional_json(q.ecn.rp[p]));
  }
  return {
      {"device", q.device},
      {"port", q.port},
      {"netdev", q.netdev},
      {"dcb", node::to_string(q.dcb.status)},
      {"dcb_reason", known(q.dcb.reason)},
      {"trust", node::to_string(v.trust)},
      {"pfc_cap", q.dcb.pfc_cap ? nlohmann::json(*q.dcb.pfc_cap) : nlohmann::json(nullptr)},
      {"pfc_enabled", pfc},
      {"dscp_prio", dscp_prio},
      {"other_apps", apps},
      {"dcbx", q.dcb.dcbx ? nlohmann::json(node::dcbx_text(*q.dcb.dcbx)) : nlohmann::json(nullptr)},
      {"roce_priority", v.priority.priority ? nlohmann::json(*v.priority.priority) : nlohmann::json(nullptr)},
      {"priority_how", known(v.priority.how)},
      {"pfc_on_roce_priority", optional_json(v.pfc_on)},
      {"ecn", {{"np", np}, {"rp", rp}}},
      {"ecn_on_roce_priority", optional_json(v.ecn_on)},
      {"default_roce_tos",
       q.default_roce_tos ? nlohmann::json(*q.default_roce_tos) : nlohmann::json(nullptr)},
      {"verdict", node::to_string(v.verdict)},
      {"reason", v.reason}};
}

std::string port_text(const node::PortQos& q, const node::PortQosVerdict& v) {
  const std::string head = fmt::format("{} ({})", v.where, v.netdev);
  if (v.verdict == node::Lossiness::NotAvailable) return fmt::format("{}: {}", head, v.reason);
  if (q.dcb.status != node::DcbStatus::Ok) return fmt::format("{}: unknown ({})", head, v.reason);
  std::string pfc = "unknown";
  if (q.dcb.pfc_en) {
    pfc.clear();
    for (int p = 0; p < node::kPriorities; ++p)
      if ((*q.dcb.pfc_en >> p) & 1u) pfc += (pfc.empty() ? "" : ",") + std::to_string(p);
    if (pfc.empty()) pfc = "none";
  }
  std::string ecn = "ECN unknown";
  if (v.priority.priority && v.ecn_on)
    ecn = fmt::format("ECN {} for priority {}", *v.ecn_on ? "on" : "off", *v.priority.priority);
  return fmt::format("{}: {} — trust {}, {}; PFC on {}; {}; DCBX {}; rdma_cm default ToS {}", head,
                     node::to_string(v.verdict), node::to_string(v.trust), v.priority.how, pfc, ecn,
                     q.dcb.dcbx ? node::dcbx_text(*q.dcb.dcbx) : "unknown",
                     q.default_roce_tos ? std::to_string(*q.default_roce_tos) : "unknown");
}

}  // namespace

Section section_qos(const NodeFacts& facts) {
  Section s;
  s.name = "qos";
  std::vector<diag::Finding> problems;
  const auto traffic = node::nccl_traffic_from_env(facts.env, &problems);
  std::vector<node::PortQos> selected;
  for (const auto& q : facts.qos)
    if (facts.hca.selects(q.device, q.port)) selected.push_back(q);
  const auto report = node::evaluate_qos(selected, traffic);

  s.text.push_back(traffic.tc_set
                       ? fmt::format("NCCL_IB_TC {} → DSCP {}", traffic.traffic_class, traffic.dscp())
                       : "NCCL_IB_TC unset: traffic class 0 (NCCL's default) → DSCP 0");
  nlohmann::json ports = nlohmann::json::array();
  for (size_t i = 0; i < selected.size(); ++i) {
    ports.push_back(port_json(selected[i], report.ports[i]));
    s.text.push_back(port_text(selected[i], report.ports[i]));
  }
  if (selected.empty()) s.text.push_back("no selected RoCE port with a netdev");
  s.json = {{"nccl_ib_tc", traffic.tc_set ? nlohmann::json(traffic.traffic_class) : nlohmann::json(nullptr)},
            {"traffic_class", traffic.traffic_class},
            {"dscp", traffic.dscp()},
            {"service_level", traffic.service_level},
            {"ports", ports}};
  s.findings = std::move(problems);
  for (const auto& f : report.findings) s.findings.push_back(f);
  return s;
}

}  // namespace railscope::doctor
