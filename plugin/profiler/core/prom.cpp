#include "plugin/profiler/core/prom.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace railscope::profiler {
namespace {

std::string le(double bound) { return bound >= 1e299 ? "+Inf" : fmt::format("{:g}", bound); }

template <size_t N>
void histogram(std::string& out, const char* name, const std::string& labels,
               const std::array<double, N>& bins, const std::array<uint64_t, N>& counts, double sum,
               uint64_t count) {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < N; ++i) {
    cumulative += counts[i];
    out += fmt::format("{}_bucket{{{},le=\"{}\"}} {}\n", name, labels, le(bins[i]), cumulative);
  }
  out += fmt::format("{}_sum{{{}}} {:.6g}\n{}_count{{{}}} {}\n", name, labels, sum, name, labels, count);
}

}  // namespace

std::string format_prometheus(const StatsTable& stats, const std::map<std::string, uint64_t>& diagnoses,
                              const std::map<std::string, uint64_t>& drops) {
  std::string out;
  out += "# HELP railscope_busbw_gbps Bus bandwidth per collective (nccl-tests definition), GB/s.\n";
  out += "# TYPE railscope_busbw_gbps histogram\n";
  for (const auto& [key, s] : stats) {
    const std::string labels =
        fmt::format("op=\"{}\",size_bucket=\"{}\"", op_name(key.first), uint64_t{1} << key.second);
    histogram(out, "railscope_busbw_gbps", labels, kBusbwBinsGbs, s.busbw_bins, s.busbw_sum, s.count);
  }
  out += "# HELP railscope_latency_us Collective completion time, microseconds.\n";
  out += "# TYPE railscope_latency_us histogram\n";
  for (const auto& [key, s] : stats) {
    const std::string labels =
        fmt::format("op=\"{}\",size_bucket=\"{}\"", op_name(key.first), uint64_t{1} << key.second);
    histogram(out, "railscope_latency_us", labels, kLatencyBinsUs, s.latency_bins, s.time_sum_us, s.count);
  }
  out += "# HELP railscope_diagnoses_total Diagnoses raised by the profiler, by catalogue id.\n";
  out += "# TYPE railscope_diagnoses_total counter\n";
  for (const auto& [id, n] : diagnoses)
    out += fmt::format("railscope_diagnoses_total{{id=\"{}\"}} {}\n", id, n);
  out += "# HELP railscope_events_dropped_total Profiler events dropped because a pool or queue was full.\n";
  out += "# TYPE railscope_events_dropped_total counter\n";
  for (const auto& [kind, n] : drops)
    out += fmt::format("railscope_events_dropped_total{{kind=\"{}\"}} {}\n", kind, n);
  return out;
}

bool write_text_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace railscope::profiler
