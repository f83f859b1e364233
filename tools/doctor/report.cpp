// SPDX-License-Identifier: Apache-2.0
// Running the sections, the exit status, and the two renderings (JSON and readable text).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

#include "doctor.h"

namespace railscope::doctor {
namespace {

constexpr SectionSpec kSections[] = {
    {"devices", "Devices and ports", section_devices},
    {"gpu_pcie", "GPU PCIe links", section_gpu_pcie},
    {"gids", "GID selection", section_gids},
    {"mtu", "MTU", section_mtu},
    {"link", "Link health (speed, siblings, link counters)", section_link},
    {"memlock", "Locked memory", section_memlock},
    {"env", "Environment", section_env},
    {"gpudirect", "GPUDirect RDMA", section_gpudirect},
    {"qos", "RoCE QoS (PFC, ECN, DSCP)", section_qos},
    {"plugins", "NCCL plugins (would they load here)", section_plugins},
};

int exit_code_for(diag::Severity s) {
  switch (s) {
    case diag::Severity::Error: return 2;
    case diag::Severity::Warning: return 1;
    default: return 0;
  }
}

std::string_view status_word(int code) { return code == 2 ? "error" : code == 1 ? "warning" : "ok"; }

}  // namespace

std::span<const SectionSpec> all_sections() { return kSections; }

Report run(const NodeFacts& facts) {
  Report r;
  for (const auto& spec : all_sections()) {
    r.sections.push_back(spec.run(facts));
    r.sections.back().name = std::string(spec.name);
    spdlog::debug("doctor: section {}: {} finding(s)", spec.name, r.sections.back().findings.size());
    for (const auto& f : r.sections.back().findings) {
      spdlog::trace("doctor: section {}: {}", spec.name, diag::one_line(f));
      r.exit_code = std::max(r.exit_code, exit_code_for(f.severity));
    }
  }
  return r;
}

nlohmann::json finding_json(const diag::Finding& f, std::string_view section) {
  return {{"id", f.id()},
          {"severity", diag::to_string(f.severity)},
          {"section", section},
          {"title", f.entry->title},
          {"detail", f.detail},
          {"fix", f.effective_fix()},
          {"line", diag::one_line(f)}};
}

const Section& section_named(const Report& report, std::string_view name) {
  for (const auto& s : report.sections)
    if (s.name == name) return s;
  throw std::out_of_range(fmt::format("no doctor section {}", name));
}

nlohmann::json to_json(const Report& report, const NodeFacts& facts) {
  nlohmann::json j;
  j["schema"] = "railscope.doctor/1";
  j["status"] = status_word(report.exit_code);
  j["exit_code"] = report.exit_code;
  j["sysfs_root"] = facts.inventory.sysfs_root;
  j["libibverbs"] = facts.inventory.used_verbs;
  nlohmann::json sections = nlohmann::json::object();
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& s : report.sections) {
    sections[s.name] = s.json;
    for (const auto& f : s.findings) findings.push_back(finding_json(f, s.name));
  }
  j["sections"] = sections;
  j["findings"] = findings;
  return j;
}

std::string to_text(const Report& report, const NodeFacts& facts) {
  std::string out = fmt::format("railscope doctor — sysfs {}, libibverbs {}\n", facts.inventory.sysfs_root,
                                facts.inventory.used_verbs ? "yes" : "no");
  const auto specs = all_sections();
  for (size_t i = 0; i < report.sections.size(); ++i) {
    out += fmt::format("\n{}\n", i < specs.size() ? specs[i].heading : report.sections[i].name);
    for (const auto& line : report.sections[i].text) out += "  " + line + "\n";
  }
  size_t n = 0;
  for (const auto& s : report.sections) n += s.findings.size();
  out += fmt::format("\nFindings ({})\n", n);
  for (const auto& s : report.sections)
    for (const auto& f : s.findings)
      out += fmt::format("  {:<7} {}\n", diag::to_string(f.severity), diag::one_line(f));
  out += fmt::format("\nStatus: {} (exit {})\n", status_word(report.exit_code), report.exit_code);
  return out;
}

}  // namespace railscope::doctor
