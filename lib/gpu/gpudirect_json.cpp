// SPDX-License-Identifier: Apache-2.0
// JSON rendering of the GPUDirect report; field names are part of doctor's JSON output (stable).
#include "railscope/gpu/gpudirect_json.h"

namespace railscope::gpu {
namespace {

nlohmann::json finding_json(const diag::Finding& f) {
  return {{"id", std::string(f.id())},
          {"severity", std::string(diag::to_string(f.severity))},
          {"detail", f.detail},
          {"fix", std::string(f.effective_fix())}};
}

}  // namespace

nlohmann::json to_json(const GpuDirectReport& r) {
  nlohmann::json j;
  j["topology"] = {{"source", r.topology_source}, {"error", r.topology_error}};
  j["cuda"] = {{"queried", r.cuda_queried},
               {"loaded", r.cuda.loaded},
               {"library", r.cuda.library},
               {"error", r.cuda.error},
               {"driver_version", r.cuda.driver_version}};
  j["peer_memory"] = {{"loaded", r.platform.peer.loaded},
                      {"nvidia_peermem", r.platform.peer.nvidia_peermem_module},
                      {"nv_peer_mem", r.platform.peer.nv_peer_mem_module},
                      {"version", r.platform.peer.version},
                      {"evidence", r.platform.peer.evidence}};
  j["kernel_dmabuf"] = {{"supported", r.platform.kernel_dmabuf.supported},
                        {"release", r.platform.kernel_dmabuf.release},
                        {"evidence", r.platform.kernel_dmabuf.evidence}};
  j["iommu"] = {{"mode", std::string(to_string(r.platform.iommu.mode))},
                {"evidence", r.platform.iommu.evidence}};
  j["policy"] = {{"gdr_level", std::string(to_string(r.policy.level.level))},
                 {"gdr_level_from_env", r.policy.level.from_env},
                 {"gdr_read", r.policy.gdr_read},
                 {"dmabuf_enable", r.policy.dmabuf_enable}};
  j["gpus"] = nlohmann::json::array();
  for (const auto& g : r.gpus)
    j["gpus"].push_back({{"label", g.facts.label},
                         {"bdf", g.facts.bdf},
                         {"numa", g.numa},
                         {"in_topology", g.in_topology},
                         {"cc", g.facts.cc_major < 0 ? std::string()
                                                     : std::to_string(g.facts.cc_major) + "." +
                                                           std::to_string(g.facts.cc_minor)},
                         {"gdr_attr", g.facts.gdr_supported},
                         {"dmabuf_attr", g.facts.dmabuf_supported}});
  j["nics"] = nlohmann::json::array();
  for (const auto& n : r.nics)
    j["nics"].push_back({{"name", n.facts.name},
                         {"bdf", n.facts.bdf},
                         {"numa", n.numa},
                         {"dmabuf_probe", std::string(to_string(n.facts.verbs_dmabuf))}});
  j["virtual_nics"] = nlohmann::json::array();
  for (const auto& n : r.virtual_nics)
    j["virtual_nics"].push_back(
        {{"name", n.facts.name}, {"dmabuf_probe", std::string(to_string(n.facts.verbs_dmabuf))}});
  j["pairs"] = nlohmann::json::array();
  for (const auto& p : r.pairs) {
    nlohmann::json f = nlohmann::json::array();
    for (const auto& x : p.findings) f.push_back(std::string(x.id()));
    j["pairs"].push_back({{"gpu", p.gpu},
                          {"nic", p.nic},
                          {"path", std::string(to_string(p.path))},
                          {"via", p.via},
                          {"gdr", p.gdr},
                          {"gdr_read", p.gdr_read},
                          {"ptr_support", p.ptr_support},
                          {"findings", f}});
  }
  j["findings"] = nlohmann::json::array();
  for (const auto& f : r.findings) j["findings"].push_back(finding_json(f));
  return j;
}

}  // namespace railscope::gpu
