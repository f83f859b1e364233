// SPDX-License-Identifier: Apache-2.0
// Verdict per RoCE port (lossless / semi-lossless / lossy / not available / unknown) and the findings
// qos.pfc_off_for_roce, qos.ecn_off_for_roce and qos.ports_disagree (definitions in qos.h). The fixes
// name the standard tools: iproute2's dcb(8) (`dcb pfc`, `dcb app`), NVIDIA's mlnx_qos, and the mlx5
// ECN sysfs files (NVIDIA MLNX_OFED documentation, "Quality of Service" and "Explicit Congestion
// Notification (ECN)").
#include <fmt/format.h>

#include <set>

#include "railscope/node/qos.h"

namespace railscope::node {
namespace {

std::string priority_list(uint8_t bits) {
  std::string out;
  for (int p = 0; p < kPriorities; ++p)
    if (bits & (1u << p)) out += (out.empty() ? "" : ",") + std::to_string(p);
  return out.empty() ? "none" : out;
}

std::string mlnx_qos_pfc(uint8_t bits) {  // mlnx_qos --pfc takes one 0/1 per priority
  std::string out;
  for (int p = 0; p < kPriorities; ++p) out += fmt::format("{}{}", p ? "," : "", (bits >> p) & 1u);
  return out;
}

// A DSCP the port maps to prio: 26 (the usual RoCE value, NCCL_IB_TC=106) when it does, else the lowest.
std::optional<int> dscp_for(const DcbState& dcb, int prio) {
  std::optional<int> lowest;
  for (const auto& a : dcb.apps) {
    if (a.selector != kAppSelDscp || a.priority != prio || a.protocol > 63) continue;
    if (a.protocol == 26) return 26;
    if (!lowest || a.protocol < *lowest) lowest = a.protocol;
  }
  return lowest;
}

diag::Finding pfc_finding(const PortQos& q, const PortQosVerdict& v, const NcclTraffic& t) {
  const int p = *v.priority.priority;
  const uint8_t en = *q.dcb.pfc_en;
  const std::string make_lossless = fmt::format(
      "enable PFC on priority {} end to end: `dcb pfc set dev {} prio-pfc {}:on` (or `mlnx_qos -i {} "
      "--pfc {}`) on every NIC, and PFC on that priority on the switch ports",
      p, q.netdev, p, q.netdev, mlnx_qos_pfc(static_cast<uint8_t>(en | (1u << p))));
  std::string fix;
  if (en != 0) {
    // PFC is on elsewhere: NCCL's traffic misses the lossless class. Point it there first.
    const int lossless = __builtin_ctz(en);
    if (v.trust == Trust::Dscp) {
      if (auto dscp = dscp_for(q.dcb, lossless))
        fix = fmt::format("Set NCCL_IB_TC={} (DSCP {} → priority {}, which has PFC), or {}", *dscp << 2,
                          *dscp, lossless, make_lossless);
      else
        fix = fmt::format(
            "Map NCCL's DSCP {} to priority {}: `dcb app add dev {} dscp-prio {}:{}` (or `mlnx_qos "
            "-i {} --dscp2prio set,{},{}`), or {}",
            t.dscp(), lossless, q.netdev, t.dscp(), lossless, q.netdev, t.dscp(), lossless, make_lossless);
    } else {
      fix = fmt::format(
          "Trust DSCP (`mlnx_qos -i {} --trust dscp`) and set NCCL_IB_TC so its DSCP maps to priority "
          "{}, or on VLAN-tagged RoCE set NCCL_IB_SL={}",
          q.netdev, lossless, lossless);
    }
  } else {
    fix = "Make RoCE lossless: " + make_lossless;
  }
  // No PFC anywhere but ECN on: semi-lossless by design (ECN-only fabrics exist); say it, do not warn.
  const bool by_design = en == 0 && v.ecn_on == true;
  return diag::make(
      "qos.pfc_off_for_roce", by_design ? diag::Severity::Info : diag::Severity::Warning,
      fmt::format("{} ({}): NCCL's RoCE traffic (traffic class {}, {}) is on priority {}; PFC is on "
                  "priority {}{}",
                  v.where, q.netdev, t.traffic_class, v.priority.how, p, priority_list(en),
                  by_design ? " (semi-lossless: ECN on)" : ""),
      fix);
}

// The shell command that turns ECN for RoCE on (a fix text, not a read: doctor reads through Sysfs).
std::string enable_ecn_command(std::string_view netdev, std::string_view point, int prio) {
  return fmt::format("`echo 1 > /sys/class/net/{}/ecn/{}/enable/{}`", netdev, point, prio);
}

diag::Finding ecn_finding(const PortQos& q, const PortQosVerdict& v) {
  const int p = *v.priority.priority;
  const auto word = [](const std::optional<bool>& b) { return b ? (*b ? "on" : "off") : "unknown"; };
  return diag::make(
      "qos.ecn_off_for_roce",
      fmt::format("{} ({}): ECN for RoCE on priority {}: notification point {}, reaction point {}", v.where,
                  q.netdev, p, word(q.ecn.np[static_cast<size_t>(p)]),
                  word(q.ecn.rp[static_cast<size_t>(p)])),
      fmt::format("{} and {} on every node (persist them in the NIC setup), and ECN marking on the switch "
                  "queue of priority {}",
                  enable_ecn_command(q.netdev, "roce_np", p), enable_ecn_command(q.netdev, "roce_rp", p), p));
}

PortQosVerdict judge(const PortQos& q, const NcclTraffic& t) {
  PortQosVerdict v;
  v.where = fmt::format("{}:{}", q.device, q.port);
  v.netdev = q.netdev;
  if (q.dcb.status == DcbStatus::NotSupported || q.dcb.status == DcbStatus::NoDevice) {
    v.verdict = Lossiness::NotAvailable;
    v.reason = "not available on this device: " + q.dcb.reason;
    return v;
  }
  if (q.dcb.status != DcbStatus::Ok) {
    v.reason = q.dcb.reason.empty() ? "DCB not read" : q.dcb.reason;
    return v;
  }
  v.trust = trust_of(q.dcb);
  v.priority = roce_priority(q.dcb, t);
  if (!v.priority.priority) {
    v.reason = v.priority.how;
    return v;
  }
  const int p = *v.priority.priority;
  v.ecn_on = q.ecn.enabled(p);
  if (!q.dcb.pfc_en) {
    v.reason = "the driver reports no PFC state";
    return v;
  }
  v.pfc_on = ((*q.dcb.pfc_en >> p) & 1u) != 0;
  if (*v.pfc_on) {
    v.verdict = Lossiness::Lossless;
    v.reason = fmt::format("PFC on priority {}", p);
  } else if (v.ecn_on == true) {
    v.verdict = Lossiness::SemiLossless;
    v.reason = fmt::format("no PFC on priority {}, ECN on", p);
  } else {
    v.verdict = Lossiness::Lossy;
    v.reason = fmt::format("no PFC on priority {}, ECN {}", p, v.ecn_on ? "off" : "unknown");
  }
  return v;
}

// qos.ports_disagree: what differs among the ports whose DCB answered.
std::optional<diag::Finding> disagreement(const std::vector<PortQos>& ports,
                                          const std::vector<PortQosVerdict>& vs) {
  std::set<std::string> trust, pfc, prio, tos;
  std::string listing;
  for (size_t i = 0; i < ports.size(); ++i) {
    const auto& q = ports[i];
    const auto& v = vs[i];
    if (q.dcb.status != DcbStatus::Ok) continue;
    trust.insert(std::string(to_string(v.trust)));
    const std::string pfc_text = q.dcb.pfc_en ? priority_list(*q.dcb.pfc_en) : "unknown";
    pfc.insert(pfc_text);
    const std::string prio_text = v.priority.priority ? std::to_string(*v.priority.priority) : "unknown";
    prio.insert(prio_text);
    if (q.default_roce_tos) tos.insert(std::to_string(*q.default_roce_tos));
    listing += fmt::format("{}{} ({}): trust {}, PFC on {}, RoCE priority {}{}", listing.empty() ? "" : "; ",
                           v.where, q.netdev, to_string(v.trust), pfc_text, prio_text,
                           q.default_roce_tos ? fmt::format(", rdma_cm ToS {}", *q.default_roce_tos) : "");
  }
  std::string differ;
  auto note = [&](const std::set<std::string>& values, std::string_view what) {
    if (values.size() > 1) differ += (differ.empty() ? "" : ", ") + std::string(what);
  };
  note(trust, "trust mode");
  note(pfc, "PFC priorities");
  note(prio, "RoCE priority");
  note(tos, "rdma_cm default ToS");
  if (differ.empty()) return std::nullopt;
  return diag::make("qos.ports_disagree", fmt::format("{} differ: {}", differ, listing));
}

}  // namespace

std::string_view to_string(Lossiness l) {
  switch (l) {
    case Lossiness::NotAvailable: return "not available";
    case Lossiness::Lossless: return "lossless";
    case Lossiness::SemiLossless: return "semi-lossless";
    case Lossiness::Lossy: return "lossy";
    default: return "unknown";
  }
}

QosReport evaluate_qos(const std::vector<PortQos>& ports, const NcclTraffic& traffic) {
  QosReport r;
  for (const auto& q : ports) {
    r.ports.push_back(judge(q, traffic));
    const auto& v = r.ports.back();
    if (v.pfc_on == false) r.findings.push_back(pfc_finding(q, v, traffic));
    if (v.ecn_on == false) r.findings.push_back(ecn_finding(q, v));
  }
  if (auto d = disagreement(ports, r.ports)) r.findings.push_back(std::move(*d));
  return r;
}

}  // namespace railscope::node
