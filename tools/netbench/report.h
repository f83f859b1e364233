// SPDX-License-Identifier: Apache-2.0
// netbench's results: one row per message size, printed as a table (as each size finishes) or as
// one JSON document at the end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace railscope::netbench {

struct Row {
  uint64_t size = 0;
  uint32_t recvs = 1;
  uint32_t window = 1;
  uint32_t bw_messages = 0;  // timed
  double bw_seconds = 0;     // how long they took
  double bytes_per_s = 0;    // 0 = bandwidth not measured
  uint32_t lat_iters = 0;
  double lat_p50_us = 0;  // half round trip
  double lat_p99_us = 0;
  double lat_seconds = 0;    // the timed round trips together
  bool few_samples = false;  // a phase below --min-messages or --min-time
  // What the wire carried for this size: every pass (a first one shorter than --min-time, then the
  // timed one) with its warm-ups. Per-message costs counted outside netbench (packets, CPU time)
  // divide by these, not by the timed figures above.
  uint64_t bw_messages_total = 0;
  uint64_t lat_round_trips_total = 0;
  uint64_t verified = 0;  // messages whose bytes were checked (0 with --no-verify)
  uint64_t mismatches = 0;
  std::string first_mismatch;
};

struct RunHeader {
  std::string plugin_path;
  std::string plugin_symbol;
  std::string plugin_name;
  std::string client_device;
  std::string engine;  // the client device's transport: verbs, TCP or unknown (engine_name.h)
  std::string server_device;
  std::string server_host;
  bool verify = true;
  uint64_t seed = 0;
  std::vector<int> client_cpus;  // the CPUs the client (this process) may run on
};

// Percentile (0..100) of unsorted samples (nearest rank); 0 for none.
double percentile(std::vector<double> samples, double pct);

std::string format_size(uint64_t bytes);  // "8", "64K", "1M"

std::string table_header(const RunHeader& h);
std::string table_row(const Row& r);
std::string to_json(const RunHeader& h, const std::vector<Row>& rows);

}  // namespace railscope::netbench
