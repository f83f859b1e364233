// SPDX-License-Identifier: Apache-2.0
#include "preflight_fingerprint.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "json_fields.h"
#include "node_report.h"

namespace railscope::cli::tuner_calibrate {
namespace {

constexpr const char* kSchema = "railscope.preflight/2";

// The value most entries share; the larger one on a tie, so a half-upgraded cluster is not undersold.
template <typename T>
T most_common(const std::map<T, int>& counts) {
  T best{};
  int seen = 0;
  for (const auto& [value, n] : counts)
    if (n >= seen) best = value, seen = n;
  return best;
}

// "mlx5_10" -> "mlx5", "bnxt_re0" -> "bnxt_re": the driver's name for the NIC family.
std::string device_family(const std::string& device) {
  size_t end = device.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(device[end - 1]))) --end;
  while (end > 0 && device[end - 1] == '_') --end;
  return device.substr(0, end);
}

bool fail(std::string* error, std::string why) {
  *error = std::move(why);
  return false;
}

bool read_rails(const nlohmann::json& report, PreflightFacts& out, std::string* error) {
  const auto rails = report.find("rails");
  if (rails == report.end()) return true;  // a report without links (--no-links) has an empty list
  if (!rails->is_array()) return fail(error, "rails: not an array");
  for (size_t i = 0; i < rails->size(); ++i) {
    const nlohmann::json& r = (*rails)[i];
    if (!r.is_object() || !r.contains("median_gbs") || !r["median_gbs"].is_number())
      return fail(error, fmt::format("rails[{}]: not an object with a number median_gbs", i));
    out.rail_median_gbs.push_back(preflight::finite_number(r, "median_gbs"));
  }
  // A rail whose links all failed has no rate (0); the others say what a rail carries.
  std::vector<double> measured;
  for (double gbs : out.rail_median_gbs)
    if (gbs > 0) measured.push_back(gbs);
  if (!measured.empty()) {
    std::sort(measured.begin(), measured.end());
    const size_t mid = measured.size() / 2;
    out.rail_gbs = measured.size() % 2 ? measured[mid] : (measured[mid - 1] + measured[mid]) / 2;
  }
  return true;
}

}  // namespace

std::optional<PreflightFacts> preflight_facts(const nlohmann::json& report, std::string* error) {
  if (!report.is_object()) return fail(error, "not a JSON object"), std::nullopt;
  const auto schema = report.find("schema");
  if (schema == report.end() || !schema->is_string())
    return fail(error, fmt::format("no \"schema\": not a `railscope preflight --json` report ({})", kSchema)),
           std::nullopt;
  if (!preflight::has_schema(report, kSchema)) {
    const auto& found = schema->get_ref<const std::string&>();
    return fail(error,
                fmt::format("schema \"{}\" is not {}{}", found.substr(0, 64), kSchema,
                            found == "railscope.preflight/1"
                                ? " (an older railscope wrote it: run railscope preflight --json again)"
                                : "")),
           std::nullopt;
  }
  PreflightFacts out;
  const auto status = report.find("status");
  if (status == report.end() || !status->is_string()) return fail(error, "status: missing"), std::nullopt;
  out.status = status->get<std::string>();
  if (out.status != "ok" && out.status != "warning" && out.status != "error")
    return fail(error, "status: not ok, warning or error"), std::nullopt;

  const auto nodes = report.find("nodes");
  if (nodes == report.end() || !nodes->is_array() || nodes->empty())
    return fail(error, "nodes: missing, not an array, or empty (no rank joined)"), std::nullopt;
  std::set<std::string> hosts;
  std::map<int, int> nic_counts;        // active NICs per node -> nodes
  std::map<int64_t, int> speeds;        // Mbit/s -> active NICs
  std::map<std::string, int> families;  // device family -> active NICs
  std::map<std::string, int> per_host;  // host -> its active NICs
  for (size_t i = 0; i < nodes->size(); ++i) {
    std::string why;
    const auto node = preflight::node_report_from_json((*nodes)[i], &why);
    if (!node) return fail(error, fmt::format("nodes[{}].{}", i, why)), std::nullopt;
    if (!hosts.insert(node->host).second) continue;  // several ranks on one node: count it once
    int active = 0;
    for (const preflight::NicSummary& n : node->nics) {
      if (n.state != "ACTIVE") continue;
      ++active;
      if (n.speed_mbps > 0) ++speeds[n.speed_mbps];
      ++families[device_family(n.device)];
    }
    ++nic_counts[active];
    per_host[node->host] = active;
  }
  if (!read_rails(report, out, error)) return std::nullopt;

  out.nodes = static_cast<int>(hosts.size());
  out.nics = most_common(nic_counts);
  if (!speeds.empty()) out.nic_gbit = static_cast<double>(most_common(speeds)) / 1000.0;
  if (families.size() == 1) out.nic = families.begin()->first;
  if (nic_counts.size() > 1) {
    std::string odd;
    for (const auto& [host, n] : per_host)
      if (n != out.nics) odd += fmt::format("{}{} ({})", odd.empty() ? "" : ", ", host, n);
    out.concerns.push_back(fmt::format("nodes differ in active NICs: most have {}, not {}", out.nics, odd));
  }
  if (speeds.size() > 1) {
    std::string rates;
    for (const auto& [mbps, n] : speeds)
      rates +=
          fmt::format("{}{} at {} Gbit/s", rates.empty() ? "" : ", ", n, static_cast<double>(mbps) / 1000.0);
    out.concerns.push_back(
        fmt::format("NICs differ in line rate ({}): the fingerprint takes {} Gbit/s", rates, out.nic_gbit));
  }
  if (out.status != "ok")
    out.concerns.push_back(
        fmt::format("preflight's verdict was '{}': the calibration measures a cluster "
                    "preflight found faults in (railscope preflight shows them)",
                    out.status));
  return out;
}

std::optional<PreflightFacts> read_preflight_report(const std::string& path, std::string* error) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::is_regular_file(st))
    return fail(error, ec ? ec.message() : "not a regular file"), std::nullopt;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size > kMaxPreflightBytes)
    return fail(error, ec ? ec.message() : fmt::format("larger than {} MiB", kMaxPreflightBytes >> 20)),
           std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) return fail(error, "cannot read it"), std::nullopt;
  nlohmann::json report;
  try {
    report = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 3, column 7: ..." without the prefix.
    std::string what = e.what();
    if (const auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    return fail(error, "not JSON: " + what), std::nullopt;
  }
  return preflight_facts(report, error);
}

}  // namespace railscope::cli::tuner_calibrate
