// SPDX-License-Identifier: Apache-2.0
#include "plugin/profiler/core/comm_expectation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "plugin/profiler/core/comm_state.h"
#include "plugin/profiler/core/jsonl_format.h"
#include "railscope/core/log.h"

namespace railscope::profiler {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

double mbps_to_gbs(int64_t mbps) { return static_cast<double>(mbps) / 8000.0; }  // Mb/s → GB/s

// A port's rate as the net plugin gave it, else as the node's sysfs shows it; 0 = unknown.
int64_t port_mbps(const SeenPort& p, const NodeCeiling* node) {
  if (p.speed_mbps > 0) return p.speed_mbps;
  if (node == nullptr) return 0;
  for (const PortRate& r : node->rates)
    if (r.name == p.name) return r.mbps;
  return 0;
}

}  // namespace

CommExpectation expected_busbw(int nranks, int nnodes, const ExpectationSources& src,
                               const NetPortsSnapshot& seen) {
  CommExpectation e;
  if (!seen.host_staged_port.empty())
    e.gdr_evidence =
        fmt::format("the net plugin stages the traffic of {} through host memory ({})", seen.host_staged_port,
                    seen.host_staged_reason.empty() ? "no reason given" : seen.host_staged_reason);
  if (src.override_gbs > 0.0) {
    e.gbs = src.override_gbs;
    e.rails = src.override_rails;
    e.basis = "RAILSCOPE_EXPECTED_BUSBW";
    return e;
  }
  if (nnodes <= 0) {
    e.basis = "its node count is unknown (NCCL gives it from profiler ABI v4 on)";
    return e;
  }
  if (nnodes == 1) {
    e.basis = "it lives on one node, where NCCL moves data over NVLink/PCIe, not the RDMA ports";
    return e;
  }
  if (nranks <= 0 || nranks % nnodes != 0) {
    e.basis = fmt::format("{} ranks on {} nodes: the ranks per node are not known", nranks, nnodes);
    return e;
  }
  const NodeCeiling* node = src.node;
  const int64_t local = nranks / nnodes;
  const int64_t node_ports = node != nullptr ? node->rails : 0;
  const int64_t gpus_per_port =
      node != nullptr && node_ports > 0 && node->gpus > node_ports ? ceil_div(node->gpus, node_ports) : 1;
  std::string shape = fmt::format("{} rank{} of this communicator per node ({} on {} nodes)", local,
                                  local == 1 ? "" : "s", nranks, nnodes);
  if (gpus_per_port > 1) shape += fmt::format(", {} GPUs on {} ports", node->gpus, node_ports);

  std::vector<int64_t> own;  // the rates of the ports this rank's connections use
  std::string own_names;
  for (const SeenPort& p : seen.ports)
    if (const int64_t mbps = port_mbps(p, node); mbps > 0) {
      own.push_back(mbps);
      own_names += (own_names.empty() ? "" : ",") + p.name;
    }
  int64_t ports = 0, mbps = 0;
  if (!own.empty()) {
    const auto n = static_cast<int64_t>(own.size());
    ports = std::max(n, ceil_div(local * n, gpus_per_port));
    if (node_ports > 0) ports = std::min(ports, node_ports);
    mbps = ports * *std::min_element(own.begin(), own.end());
    if (node != nullptr) {
      int64_t node_mbps = 0;
      for (const PortRate& r : node->rates) node_mbps += r.mbps;
      mbps = std::min(mbps, node_mbps);
    }
    e.basis = fmt::format("{}, this rank's connections on {} (net plugin): {} port{}", shape, own_names,
                          ports, ports == 1 ? "" : "s");
  } else if (node_ports > 0) {
    ports = std::min(node_ports, ceil_div(local, gpus_per_port));
    std::vector<int64_t> rates;
    for (const PortRate& r : node->rates) rates.push_back(r.mbps);
    std::sort(rates.begin(), rates.end());
    for (int64_t i = 0; i < ports; ++i) mbps += rates[static_cast<size_t>(i)];
    e.basis = fmt::format("{}: {} of the node's {} selected RDMA port{} ({})", shape, ports, node_ports,
                          node_ports == 1 ? "" : "s", node->ports);
  } else {
    e.basis = "no active RDMA port is selected (NCCL_IB_HCA) and the net plugin named none";
    return e;
  }
  e.gbs = mbps_to_gbs(mbps);
  e.rails = src.override_rails > 0 ? src.override_rails : static_cast<int>(ports);
  return e;
}

void apply_expectation(const SlowConfig& base, const std::optional<NodeCeiling>& node, CommState* c) {
  MonitorCommState& m = c->monitor;
  m.net_ports_generation = c->net_ports.generation();
  ExpectationSources src;
  src.override_gbs = base.expected_gbs;
  src.override_rails = base.rails;
  src.node = node ? &*node : nullptr;
  CommExpectation e = expected_busbw(c->ident.nranks, c->ident.nnodes, src, c->net_ports.snapshot());
  const SlowConfig& now = m.slow.config();
  if (m.expectation_set && now.expected_gbs == e.gbs && now.rails == e.rails &&
      now.gdr_evidence == e.gdr_evidence)
    return;
  m.expectation_set = true;
  SlowConfig cfg = base;
  cfg.expected_gbs = e.gbs;
  cfg.rails = e.rails;
  cfg.basis = std::move(e.basis);
  cfg.gdr_evidence = std::move(e.gdr_evidence);
  if (cfg.expected_gbs > 0.0)
    RS_INFO(NCCL_PROFILE, "railscope profiler: comm {} rank {}: expected busbw {:.1f} GB/s from {}{}{}",
            comm_hex(c->ident.hash), c->ident.rank, cfg.expected_gbs, cfg.basis,
            cfg.basis == "RAILSCOPE_EXPECTED_BUSBW" ? "" : " (RAILSCOPE_EXPECTED_BUSBW overrides)",
            cfg.gdr_evidence.empty() ? "" : "; " + cfg.gdr_evidence);
  else
    RS_INFO(NCCL_PROFILE,
            "railscope profiler: comm {} rank {}: no expected busbw, so no slow-collective diagnosis: {} "
            "(RAILSCOPE_EXPECTED_BUSBW sets one)",
            comm_hex(c->ident.hash), c->ident.rank, cfg.basis);
  m.slow = SlowDetector(std::move(cfg));
}

}  // namespace railscope::profiler
