// SPDX-License-Identifier: Apache-2.0
// Reading the QoS facts of the node's RoCE ports, and the NCCL traffic class → DSCP → priority chain
// (the conventions are documented in qos.h).
#include <fmt/format.h>

#include "railscope/core/params.h"
#include "railscope/node/qos.h"
#include "railscope/node/sysfs.h"

namespace railscope::node {
namespace {

// A registered NCCL variable read through env with the registry's range; problems get config.bad_env.
std::optional<int> env_int(const EnvLookup& env, std::string_view name,
                           std::vector<diag::Finding>* problems) {
  const auto text = env ? env(name) : std::nullopt;
  if (!text) return std::nullopt;
  const auto* spec = params::find(name);
  std::string error;
  const auto v = params::parse_int(*text, spec ? spec->min : 0, spec ? spec->max : 255, &error);
  if (!v) {
    if (problems)
      problems->push_back(diag::make("config.bad_env", fmt::format("{}={}: {}", name, *text, error),
                                     fmt::format("Fix or unset {}; doctor assumes NCCL's default 0", name)));
    return std::nullopt;
  }
  if (*v < 0) return std::nullopt;  // -1: the communicator's, which doctor cannot see
  return static_cast<int>(*v);
}

}  // namespace

std::vector<PortQos> read_qos(const Inventory& inventory, const Sysfs& sysfs, const DcbSource& dcb) {
  std::vector<PortQos> out;
  for (const auto& d : inventory.devices)
    for (const auto& p : d.ports) {
      if (p.link_layer != LinkLayer::Ethernet || p.netdev.empty()) continue;
      PortQos q;
      q.device = d.name;
      q.port = p.number;
      q.netdev = p.netdev;
      q.dcb = dcb.read(p.netdev);
      q.ecn = read_roce_ecn(sysfs, p.netdev);
      q.default_roce_tos = read_default_roce_tos(sysfs, d.name, p.number);
      out.push_back(std::move(q));
    }
  return out;
}

NcclTraffic nccl_traffic_from_env(const EnvLookup& env, std::vector<diag::Finding>* problems) {
  NcclTraffic t;
  if (auto tc = env_int(env, "NCCL_IB_TC", problems)) {
    t.tc_set = true;
    t.traffic_class = *tc;
  }
  if (auto sl = env_int(env, "NCCL_IB_SL", problems)) t.service_level = *sl & 7;
  return t;
}

std::string_view to_string(Trust t) {
  switch (t) {
    case Trust::Pcp: return "pcp";
    case Trust::Dscp: return "dscp";
    default: return "unknown";
  }
}

Trust trust_of(const DcbState& dcb) {
  if (dcb.status != DcbStatus::Ok) return Trust::Unknown;
  for (const auto& a : dcb.apps)
    if (a.selector == kAppSelDscp) return Trust::Dscp;
  return Trust::Pcp;
}

RocePriority roce_priority(const DcbState& dcb, const NcclTraffic& traffic) {
  RocePriority r;
  switch (trust_of(dcb)) {
    case Trust::Dscp: {
      const int dscp = traffic.dscp();
      for (const auto& a : dcb.apps)
        if (a.selector == kAppSelDscp && a.protocol == dscp && a.priority < kPriorities) {
          r.priority = a.priority;
          r.how = fmt::format("DSCP {} → priority {} (dscp-prio map)", dscp, a.priority);
          return r;
        }
      r.how = fmt::format("trust dscp, but DSCP {} has no dscp-prio entry", dscp);
      return r;
    }
    case Trust::Pcp:
      r.priority = traffic.service_level;
      r.how = fmt::format("trust pcp: PCP = NCCL_IB_SL {} (untagged frames carry none: priority 0)",
                          traffic.service_level);
      return r;
    default: r.how = "DCB not read"; return r;
  }
}

}  // namespace railscope::node
