#include "plugin/profiler/core/prom.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <utility>

#include "plugin/profiler/core/jsonl_format.h"
#include "railscope/core/utf8.h"

namespace railscope::profiler {
namespace {

// Histogram bounds in base units: the bins of op_stats.h scaled (GB/s → bytes/s, µs → s).
std::string bound(double v) { return v >= 1e299 ? "+Inf" : fmt::format("{:g}", v); }

template <size_t N>
void histogram(std::string& out, const char* name, const std::string& labels,
               const std::array<double, N>& bins, double scale, const std::array<uint64_t, N>& counts,
               double sum, uint64_t count) {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < N; ++i) {
    cumulative += counts[i];
    const double le = bins[i] >= 1e299 ? bins[i] : bins[i] * scale;
    out += fmt::format("{}_bucket{{{},le=\"{}\"}} {}\n", name, labels, bound(le), cumulative);
  }
  out += fmt::format("{}_sum{{{}}} {:.9g}\n{}_count{{{}}} {}\n", name, labels, sum, name, labels, count);
}

// One metric family: HELP and TYPE, then the samples `body` appends; nothing when it appends none.
void family(std::string& out, const char* name, const char* type, const char* help,
            const std::function<void(std::string&)>& body) {
  std::string samples;
  body(samples);
  if (samples.empty()) return;
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  out += samples;
}

void add_into(PromCommSeries& into, const PromCommSeries& from) {
  for (const auto& [key, st] : from.stats) into.stats[key].merge(st);
  for (const auto& [op, n] : from.records) into.records[op] += n;
  for (const auto& [id, n] : from.diagnoses) into.diagnoses[id] += n;
  for (const auto& [kind, n] : from.drops) into.drops[kind] += n;
}

}  // namespace

std::string prom_label_value(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (u >= 0x80) {
      utf8::append_or_replacement(out, s, i);  // UTF-8 kept, a stray byte becomes U+FFFD
      continue;
    }
    if (u == '\\')
      out += "\\\\";
    else if (u == '"')
      out += "\\\"";
    else if (u == '\n')
      out += "\\n";
    else if (u < 0x20 || u == 0x7f)
      out += ' ';
    else
      out += static_cast<char>(u);
    ++i;
  }
  return out;
}

std::string format_prometheus(const PromProcess& process, const std::vector<const PromCommSeries*>& given) {
  std::map<std::pair<std::string, int>, PromCommSeries> merged;
  for (const PromCommSeries* c : given) {
    PromCommSeries& m = merged[{c->comm, c->rank}];
    m.comm = c->comm;
    m.rank = c->rank;
    add_into(m, *c);
  }
  std::vector<const PromCommSeries*> comms;
  for (const auto& [key, m] : merged) comms.push_back(&m);
  const std::string host = prom_label_value(process.host);
  auto base = [&](const PromCommSeries& c) {
    return fmt::format("host=\"{}\",rank=\"{}\",comm=\"{}\"", host, c.rank, prom_label_value(c.comm));
  };
  auto op_size = [&](const PromCommSeries& c, const StatsKey& key) {
    return fmt::format("{},op=\"{}\",size_bytes=\"{}\"", base(c), op_name(key.first),
                       uint64_t{1} << key.second);
  };
  std::string out;
  family(out, "railscope_collective_duration_seconds", "histogram",
         "Completion time of each operation (GPU time when known), by power-of-two bucket of the nccl-tests "
         "message size.",
         [&](std::string& s) {
           for (const PromCommSeries* c : comms)
             for (const auto& [key, st] : c->stats)
               histogram(s, "railscope_collective_duration_seconds", op_size(*c, key), kLatencyBinsUs, 1e-6,
                         st.latency_bins, st.time_sum_us * 1e-6, st.count);
         });
  family(out, "railscope_busbw_bytes_per_second", "histogram",
         "Bus bandwidth of each operation as nccl-tests defines it (algbw times the busbw factor), bytes per "
         "second.",
         [&](std::string& s) {
           for (const PromCommSeries* c : comms)
             for (const auto& [key, st] : c->stats)
               histogram(s, "railscope_busbw_bytes_per_second", op_size(*c, key), kBusbwBinsGbs, 1e9,
                         st.busbw_bins, st.busbw_sum * 1e9, st.count);
         });
  family(out, "railscope_operations_total", "counter",
         "Collective and point-to-point operations recorded in the profile, with or without a time.",
         [&](std::string& s) {
           for (const PromCommSeries* c : comms)
             for (const auto& [op, n] : c->records)
               s += fmt::format("railscope_operations_total{{{},op=\"{}\"}} {}\n", base(*c), op_name(op), n);
         });
  family(out, "railscope_diagnoses_total", "counter", "Diagnoses raised by the profiler, by catalogue id.",
         [&](std::string& s) {
           for (const PromCommSeries* c : comms)
             for (const auto& [id, n] : c->diagnoses)
               s += fmt::format("railscope_diagnoses_total{{{},id=\"{}\"}} {}\n", base(*c),
                                prom_label_value(id), n);
         });
  family(out, "railscope_events_dropped_total", "counter",
         "Profiler events dropped because a fixed pool or queue was full, by kind.", [&](std::string& s) {
           for (const PromCommSeries* c : comms)
             for (const auto& [kind, n] : c->drops)
               s += fmt::format("railscope_events_dropped_total{{{},kind=\"{}\"}} {}\n", base(*c),
                                prom_label_value(kind), n);
         });
  family(out, "railscope_profiler_last_write_timestamp_seconds", "gauge",
         "When this process last wrote this file (Unix time); a file whose time stops moving belongs to a "
         "process that has ended.",
         [&](std::string& s) {
           s += fmt::format(
               "railscope_profiler_last_write_timestamp_seconds{{host=\"{}\",pid=\"{}\"}} {:.3f}\n", host,
               process.pid, process.unix_seconds);
         });
  return out;
}

std::string prom_file_path(const std::string& dir, const std::string& host, int pid) {
  std::string safe;
  for (const char ch : host) {
    const bool keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                      ch == '.' || ch == '-' || ch == '_';
    safe += keep ? ch : '_';
  }
  if (safe.empty()) safe = "unknown";
  return fmt::format("{}/railscope-{}-{}.prom", dir, safe, pid);
}

}  // namespace railscope::profiler
