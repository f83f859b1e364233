// SPDX-License-Identifier: Apache-2.0
#include "report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "railscope/cli/json_figure.h"

namespace railscope::netbench {

double percentile(std::vector<double> samples, double pct) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const double rank = std::ceil(pct / 100.0 * static_cast<double>(samples.size()));
  const size_t idx = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return samples[std::min(idx, samples.size() - 1)];
}

std::string format_size(uint64_t bytes) {
  if (bytes >= (1ULL << 20) && bytes % (1ULL << 20) == 0) return fmt::format("{}M", bytes >> 20);
  if (bytes >= (1ULL << 10) && bytes % (1ULL << 10) == 0) return fmt::format("{}K", bytes >> 10);
  return fmt::format("{}", bytes);
}

std::string table_header(const RunHeader& h) {
  std::string out = fmt::format(
      "# railscope netbench: {} -> {}{} through {} ({}, \"{}\"), engine {}, data {}\n", h.client_device,
      h.server_device, h.server_host.empty() ? "" : "@" + h.server_host, h.plugin_path, h.plugin_symbol,
      h.plugin_name, h.engine, h.verify ? fmt::format("verified (seed {:#x})", h.seed) : "not verified");
  out += fmt::format("# {:>9} {:>5} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "size", "recvs", "window",
                     "messages", "GB/s", "Gb/s", "p50 us", "p99 us");
  return out;
}

std::string table_row(const Row& r) {
  auto bw = [&](double scale) {
    return r.bytes_per_s > 0 ? fmt::format("{:.4f}", r.bytes_per_s * scale) : "-";
  };
  auto lat = [&](double v) { return r.lat_iters > 0 ? fmt::format("{:.2f}", v) : "-"; };
  std::string out =
      fmt::format("  {:>9} {:>5} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10}", format_size(r.size), r.recvs,
                  r.window, r.bw_messages, bw(1e-9), bw(8e-9), lat(r.lat_p50_us), lat(r.lat_p99_us));
  if (r.few_samples) out += "   (few samples)";
  if (r.mismatches > 0) out += fmt::format("   DATA MISMATCH x{}: {}", r.mismatches, r.first_mismatch);
  return out + "\n";
}

std::string to_json(const RunHeader& h, const std::vector<Row>& rows) {
  nlohmann::json j;
  j["tool"] = "railscope netbench";
  j["plugin"] = {{"path", h.plugin_path}, {"symbol", h.plugin_symbol}, {"name", h.plugin_name}};
  j["client_device"] = h.client_device;
  j["engine"] = h.engine;
  j["server_device"] = h.server_device;
  j["server_host"] = h.server_host;
  j["verify"] = h.verify;
  j["seed"] = h.seed;
  j["client_cpus"] = h.client_cpus;
  auto& out = j["results"] = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json o = {{"size", r.size},
                        {"recvs", r.recvs},
                        {"window", r.window},
                        {"bw_messages", r.bw_messages},
                        {"lat_iters", r.lat_iters},
                        {"verified_messages", r.verified},
                        {"mismatches", r.mismatches},
                        {"few_samples", r.few_samples},
                        {"bw_messages_total", r.bw_messages_total},
                        {"lat_round_trips_total", r.lat_round_trips_total}};
    if (r.bytes_per_s > 0) {
      o["bytes_per_s"] = cli::json_figure(r.bytes_per_s);
      o["gbs"] = cli::json_figure(r.bytes_per_s * 1e-9);    // GB/s, 10^9 bytes/s (docs/cli.md)
      o["gbits"] = cli::json_figure(r.bytes_per_s * 8e-9);  // Gbit/s, 10^9 bits/s
    }
    if (r.lat_iters > 0) {
      o["lat_p50_us"] = cli::json_figure(r.lat_p50_us);
      o["lat_p99_us"] = cli::json_figure(r.lat_p99_us);
    }
    if (r.mismatches > 0) o["first_mismatch"] = r.first_mismatch;
    out.push_back(std::move(o));
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace railscope::netbench
