// SPDX-License-Identifier: Apache-2.0
// Traffic class and service level of a connection's QPs, and the check that both ends of the job were
// given the same ones. NCCL's IB transport lets the sender decide: its QPs carry NCCL_IB_TC / NCCL_IB_SL
// (else the communicator's traffic class, else 0), and the receiver's QPs take the sender's values from
// the handshake, except that NCCL_IB_FIFO_TC, where set, is the class of the receiver's QPs on RoCE
// (they carry the clear-to-sends and the acknowledgements). railscope does the same, and in addition
// each end tells the other what it would have used itself, so that two nodes configured differently
// (one rail's traffic lossless in one direction only) are named at connect time on both ends.
// The flow label is not part of it: both ends set 0 on every QP, as NCCL does, so it cannot differ.
#pragma once

#include <optional>
#include <string>

#include "plugin/net/verbs/setup/handshake.h"
#include "plugin/net/verbs/setup/link_params.h"

namespace railscope::net::verbs {

// What the receiver's QPs use, and the disagreement between the sender's HELLO and this end's own
// setting (nullopt when they agree or this end's setting is not known: own.qos_known false).
struct QosAgreement {
  int traffic_class = 0;
  int service_level = 0;
  std::optional<diag::Finding> mismatch;  // qos.tc_mismatch
};
// roce: the connection runs over Ethernet (the traffic class is the IP ToS only there).
QosAgreement agree_qos_at_receiver(const LinkParams& own, const std::string& own_host, const EndInfo& sender,
                                   bool roce);

// What the receiver's REPLY says about its own setting: its values where known, else the sender's
// (an end that cannot judge adopts silently, as NCCL's receiver always does).
void reply_qos(const LinkParams& own, const EndInfo& sender, EndInfo* reply);

// At the sender, on the REPLY: qos.tc_mismatch when the receiver's own setting differs.
std::optional<diag::Finding> check_qos_at_sender(const EndInfo& own, const EndInfo& receiver, bool roce);

// Logs a qos.tc_mismatch once per process for each pair of hosts and values (NCCL opens many
// connections between the same two nodes; each would repeat the line).
void warn_qos_mismatch_once(const diag::Finding& f);

}  // namespace railscope::net::verbs
