// SPDX-License-Identifier: Apache-2.0
// Gathers every GPUDirect fact of a node (topology, sysfs, CUDA driver, the caller's verbs probes)
// and decides every (GPU, NIC) pair; renders the matrix as text. Used by `railscope doctor`
// (section gpudirect) and by tools; the net plugin uses the lower-level pieces directly.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "railscope/core/diagnosis.h"
#include "railscope/gpu/cuda_driver.h"
#include "railscope/gpu/gdr_decision.h"
#include "railscope/gpu/pci_topology.h"

namespace railscope::gpu {

struct ReportOptions {
  std::string topo_file;           // explicit file (doctor --topo); else RAILSCOPE_TOPO_FILE; else the system
  SysfsRoot fs;                    // where sysfs/procfs live (tests: a fake tree)
  bool query_cuda = true;          // false: skip libcuda entirely
  std::string cuda_library;        // "" = libcuda.so.1 (tests: a fake driver)
  std::vector<NicHint> nic_hints;  // NICs lib/node found (name, PCI path)
  std::map<std::string, DmabufProbe> verbs_dmabuf;  // per NIC name, from probe_verbs_dmabuf
  std::optional<GdrPolicy> policy;                  // default: from the environment
  static ReportOptions from_env();                  // fs and policy from the environment
};

struct GpuRow {
  GpuFacts facts;
  int numa = -1;
  bool in_topology = false;  // hwloc saw it (else only the CUDA driver did)
};

struct NicRow {
  NicFacts facts;
  int numa = -1;
  std::vector<std::string> netdevs;
};

struct GpuDirectReport {
  std::string topology_source;
  std::string topology_error;  // non-empty: no matrix could be computed
  CudaDriverInfo cuda;
  bool cuda_queried = false;
  PlatformFacts platform;
  GdrPolicy policy;
  std::vector<GpuRow> gpus;
  std::vector<NicRow> nics;
  std::vector<NicRow> virtual_nics;     // RDMA devices without a PCI device in the topology (rxe, ...)
  std::vector<PairDecision> pairs;      // gpu-major
  std::vector<diag::Finding> findings;  // node-level and per-pair, deduplicated, worst first

  const PairDecision* pair(const std::string& gpu, const std::string& nic) const;
};

GpuDirectReport build_report(const ReportOptions& options);
std::string render_text(const GpuDirectReport& report);
// Worst severity among the findings (Ok when none).
diag::Severity worst_severity(const GpuDirectReport& report);

}  // namespace railscope::gpu
