// SPDX-License-Identifier: Apache-2.0
// `railscope doctor`: a pre-flight report of the node's RDMA setup, built from sections. Each section
// is one function from the gathered facts to its findings, its JSON object and its text lines, so adding
// a section (e.g. the GPU×NIC matrix) is one entry in all_sections().
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "railscope/core/diagnosis.h"
#include "railscope/node/env_hygiene.h"
#include "railscope/node/gid_selection.h"
#include "railscope/node/hca_filter.h"
#include "railscope/node/inventory.h"
#include "railscope/node/link_health.h"
#include "railscope/node/memlock.h"
#include "railscope/node/pcie_link.h"
#include "railscope/node/qos.h"

namespace railscope::doctor {

// One NVIDIA GPU's PCIe link as sysfs has it (the upstream port's where the GPU reports none).
struct GpuLink {
  std::string pci_address;             // "0000:1b:00.0"
  std::optional<node::PcieLink> link;  // none: neither the GPU nor its port has the attributes
};

// Everything the sections look at, gathered once (tests build it by hand).
struct NodeFacts {
  node::Inventory inventory;
  node::GidPolicy gid_policy;
  node::HcaFilter hca;
  node::MemlockState memlock;
  node::EnvLookup env;
  std::vector<diag::Finding> config_problems;  // bad NCCL_IB_* values met while reading the policy
  std::vector<node::PortQos> qos;              // DCB, ECN and rdma_cm ToS of the RoCE ports (qos section)
  std::string topo_file;  // hwloc XML for the GPUDirect section; empty: RAILSCOPE_TOPO_FILE or this system
  node::LinkHealth link;  // speeds against capability and siblings, link counters (gather() reads them)
  std::vector<GpuLink> gpu_links;  // every NVIDIA GPU on the PCI bus (gpu_pcie section)
};

struct GatherOptions {
  std::string sysfs_root;  // empty: RAILSCOPE_SYSFS_ROOT or /sys
  bool use_verbs = true;
  std::string topo_file;
};
NodeFacts gather(const GatherOptions& options);

struct Section {
  std::string name;
  std::vector<diag::Finding> findings;
  nlohmann::json json = nlohmann::json::object();
  std::vector<std::string> text;  // lines of the readable report, without the heading
};

struct SectionSpec {
  std::string_view name;
  std::string_view heading;
  Section (*run)(const NodeFacts&);
};
// In report order: devices, gpu_pcie, gids, mtu, link, memlock, env, gpudirect, qos, plugins.
std::span<const SectionSpec> all_sections();

Section section_devices(const NodeFacts& facts);
Section section_gpu_pcie(const NodeFacts& facts);
Section section_gids(const NodeFacts& facts);
Section section_mtu(const NodeFacts& facts);
Section section_link(const NodeFacts& facts);
Section section_memlock(const NodeFacts& facts);
Section section_env(const NodeFacts& facts);
Section section_gpudirect(const NodeFacts& facts);
Section section_qos(const NodeFacts& facts);
Section section_plugins(const NodeFacts& facts);  // section_plugins.h

// Ports NCCL would use: selected by NCCL_IB_HCA (every port when unset).
bool port_selected(const NodeFacts& facts, const node::Device& d, const node::Port& p);
std::string port_name(const node::Device& d, const node::Port& p);  // "rxe0:1"

struct Report {
  std::vector<Section> sections;
  int exit_code = 0;  // 0 healthy (info at most), 1 warnings, 2 errors
};
Report run(const NodeFacts& facts);
// The section called `name` of a report; throws std::out_of_range when it has none.
const Section& section_named(const Report& report, std::string_view name);

nlohmann::json to_json(const Report& report, const NodeFacts& facts);
std::string to_text(const Report& report, const NodeFacts& facts);

// Helpers shared by the sections.
nlohmann::json finding_json(const diag::Finding& f, std::string_view section);
// 0 / empty means unknown: null in JSON.
nlohmann::json known(int64_t v);
nlohmann::json known(const std::string& v);

}  // namespace railscope::doctor
