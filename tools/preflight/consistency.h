// SPDX-License-Identifier: Apache-2.0
// Rank 0's comparison of the node reports: per rail (the i-th selected port of every node, in natural
// name order) the same link layer, active MTU, GID type and family, link rate and firmware; rail
// alignment (NIC i of every node in the subnet of NIC i of the others); the same number of rails; the
// same NCCL_* environment and NCCL_IB_TC. Every difference is a finding naming the odd node and NIC
// against the majority; when there is no majority (two nodes that disagree) it names every value.
#pragma once

#include <vector>

#include "node_report.h"
#include "railscope/core/diagnosis.h"

namespace railscope::preflight {

// NCCL variables that legitimately differ between nodes and are not compared.
bool env_compared(const std::string& name);

// At most this many findings per property; the rest are counted in one more finding.
constexpr size_t kMaxNamedPerProperty = 32;

// ranks (if given) gets, per finding, the ranks of the nodes it is about: the odd node, every node of a
// property with no majority, the unnamed odd ones of the "more nodes differ" finding.
std::vector<diag::Finding> check_consistency(const std::vector<NodeReport>& nodes,
                                             std::vector<std::vector<int>>* ranks = nullptr);

}  // namespace railscope::preflight
