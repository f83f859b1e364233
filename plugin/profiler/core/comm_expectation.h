// SPDX-License-Identifier: Apache-2.0
// The busbw one communicator may expect on this node, from its shape and the RDMA ports its ranks can
// drive (docs/profiler.md "Expected busbw per communicator"), never the node's port sum alone:
//  - one node: NCCL moves the data over NVLink/PCIe, not the NICs: no expectation (only
//    RAILSCOPE_EXPECTED_BUSBW judges it);
//  - N nodes, L = nRanks / N ranks of it per node (an uneven split: no expectation): an inter-node
//    ring or tree is limited at each node by the ports its L local ranks drive together. Rail-optimised
//    nodes give each GPU its nearest port; G GPUs sharing P ports (G > P) put ceil(G / P) GPUs on one,
//    so the L ranks drive at least k = min(P, ceil(L / ceil(G / P))) ports: the expectation is the sum
//    of the k slowest selected ports (a lower bound: ranks spread over more ports may be faster);
//  - when railscope's net plugin names the ports this rank's connections use (RailscopeNetPort_v1), a
//    rank drives those n ports: k = min(P, max(n, ceil(L·n / ceil(G / P)))) ports at the slowest of
//    their rates, and never more than the node's selected ports together.
// RAILSCOPE_EXPECTED_BUSBW (and RAILSCOPE_EXPECTED_RAILS) override the figure for every communicator.
#pragma once

#include <optional>
#include <string>

#include "plugin/profiler/core/net_ports_seen.h"
#include "plugin/profiler/core/node_ceiling.h"
#include "plugin/profiler/core/slow_detector.h"

namespace railscope::profiler {

struct CommState;

struct CommExpectation {
  double gbs = 0.0;          // GB/s; 0 = the communicator is not judged
  int rails = 0;             // ports behind gbs (k); 0 = unknown
  std::string basis;         // how gbs was derived, or why there is none (log line, finding)
  std::string gdr_evidence;  // the net plugin's word that traffic is staged through host memory
};

struct ExpectationSources {
  double override_gbs = 0.0;          // RAILSCOPE_EXPECTED_BUSBW; 0 = unset
  int override_rails = 0;             // RAILSCOPE_EXPECTED_RAILS; 0 = unset
  const NodeCeiling* node = nullptr;  // the node's selected active ports; nullptr = none known
};

CommExpectation expected_busbw(int nranks, int nnodes, const ExpectationSources& src,
                               const NetPortsSnapshot& seen);

// Sets the communicator's slow detector to its expectation (from `base`: RAILSCOPE_SLOW_* and the
// overrides) and logs it (INFO) when it changed; the monitor calls it when the communicator starts and
// whenever the net plugin reports a port not seen before.
void apply_expectation(const SlowConfig& base, const std::optional<NodeCeiling>& node, CommState* c);

}  // namespace railscope::profiler
