// SPDX-License-Identifier: Apache-2.0
// QoS of the node's RoCE ports for NCCL's traffic, as `railscope doctor`'s qos section reports it
// (docs/roce-qos.md explains the terms and the fixes).
//
// The chain: NCCL_IB_TC is the traffic class NCCL writes in its QPs' GRH (NCCL user guide, "Environment
// Variables", NCCL_IB_TC: default 0), which RoCE v2 carries as the IP ToS byte, so DSCP = TC >> 2 (the
// two low bits are the ECN field). The receiving port turns the packet into a priority by its trust
// mode: `trust dscp` looks the DSCP up in the DSCP → priority map (DCB APP entries with the DSCP
// selector; mlx5 fills all 64 when trust is dscp, `mlnx_qos --trust dscp`, `dcb app show dev <if>
// dscp-prio`); `trust pcp` (no DSCP entry) uses the VLAN PCP, which for RoCE is the QP's service level
// (NCCL_IB_SL, default 0) — untagged traffic has none and lands on priority 0. That priority is lossless
// when PFC is enabled on it (DCB pfc_en bit), and has congestion control when ECN is on for it at both
// the notification and the reaction point.
//
// Verdict per port (railscope's definitions, docs/roce-qos.md):
//   lossless       PFC on for the RoCE priority;
//   semi-lossless  no PFC for it, but ECN (DCQCN) on at both points: congestion is signalled, a burst
//                  can still drop;
//   lossy          neither (ECN off or unknown);
//   not available  the device has no DCB (veth, rxe/siw's netdev): information, never a warning;
//   unknown        DCB could not be read or the priority cannot be derived.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "railscope/core/diagnosis.h"
#include "railscope/node/env_hygiene.h"
#include "railscope/node/inventory.h"
#include "railscope/node/qos_dcb.h"
#include "railscope/node/qos_sysfs.h"

namespace railscope::node {

// What was read for one RoCE port.
struct PortQos {
  std::string device;
  int port = 0;
  std::string netdev;
  DcbState dcb;
  RoceEcn ecn;
  std::optional<int> default_roce_tos;  // rdma_cm configfs; nullopt = unknown
};

// Every Ethernet (RoCE) port of the inventory that has a netdev, in inventory order.
std::vector<PortQos> read_qos(const Inventory& inventory, const Sysfs& sysfs, const DcbSource& dcb);

// NCCL's traffic as the environment sets it.
struct NcclTraffic {
  bool tc_set = false;    // NCCL_IB_TC given (else NCCL's default 0)
  int traffic_class = 0;  // 0..255
  int service_level = 0;  // NCCL_IB_SL, 0..7 used as PCP
  int dscp() const { return traffic_class >> 2; }
};
// NCCL_IB_TC / NCCL_IB_SL through env; a bad value adds config.bad_env to problems and counts as unset.
// -1 (railscope's "the communicator's") counts as unset: doctor cannot see a communicator's config.
NcclTraffic nccl_traffic_from_env(const EnvLookup& env, std::vector<diag::Finding>* problems);

enum class Trust { Unknown, Pcp, Dscp };
std::string_view to_string(Trust t);
// Dscp when the APP table has a DSCP entry, Pcp when DCB answered without one, Unknown otherwise.
Trust trust_of(const DcbState& dcb);

struct RocePriority {
  std::optional<int> priority;  // 0..7; nullopt = cannot say
  std::string how;              // "DSCP 26 → priority 3 (dscp-prio map)"
};
RocePriority roce_priority(const DcbState& dcb, const NcclTraffic& traffic);

enum class Lossiness { NotAvailable, Unknown, Lossless, SemiLossless, Lossy };
std::string_view to_string(Lossiness l);

struct PortQosVerdict {
  std::string where;  // "mlx5_0:1"
  std::string netdev;
  Trust trust = Trust::Unknown;
  RocePriority priority;
  std::optional<bool> pfc_on;  // PFC on the RoCE priority
  std::optional<bool> ecn_on;  // ECN np and rp on the RoCE priority
  Lossiness verdict = Lossiness::Unknown;
  std::string reason;  // one phrase behind the verdict
};

struct QosReport {
  std::vector<PortQosVerdict> ports;  // one per PortQos given, same order
  std::vector<diag::Finding> findings;
};
// Verdicts and findings: qos.pfc_off_for_roce, qos.ecn_off_for_roce per port, qos.ports_disagree once.
// Ports whose DCB is not available give neither.
QosReport evaluate_qos(const std::vector<PortQos>& ports, const NcclTraffic& traffic);

}  // namespace railscope::node
