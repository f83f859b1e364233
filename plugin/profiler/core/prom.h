// Prometheus textfile exposition (node_exporter textfile collector format): busbw and latency
// histograms per (op, size bucket), diagnosis and drop counters.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "plugin/profiler/core/op_stats.h"

namespace railscope::profiler {

std::string format_prometheus(const StatsTable& stats, const std::map<std::string, uint64_t>& diagnoses,
                              const std::map<std::string, uint64_t>& drops);
// Writes atomically (temporary file + rename); false on failure.
bool write_text_file_atomically(const std::string& path, const std::string& content);

}  // namespace railscope::profiler
