// SPDX-License-Identifier: Apache-2.0
#include "plugin/profiler/core/prom.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>
#include <utility>

namespace railscope::profiler {
namespace {

// The `le` bounds written, a subset of op_stats.h's bins (cumulative counts stay exact at any subset):
// busbw 1, 10, 50, 100, 200, 400 GB/s and +Inf.
constexpr std::array<size_t, 7> kBusbwBounds = {0, 3, 5, 6, 7, 8, 11};
static_assert(kBusbwBounds.back() == kBusbwBinsGbs.size() - 1, "+Inf is written");

std::string bound(double v) { return v >= 1e299 ? "+Inf" : fmt::format("{:g}", v); }

// One metric family: HELP and TYPE, then the samples `body` appends; nothing when it appends none.
void family(std::string& out, const char* name, const char* type, const char* help,
            const std::function<void(std::string&)>& body) {
  std::string samples;
  body(samples);
  if (samples.empty()) return;
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  out += samples;
}

// A communicator's series are keyed by (rank label, size, nodes): communicators of one shape add up.
using ShapeKey = std::tuple<int, int, int>;
using ClassKey = std::pair<Op, std::string_view>;

struct Shape {
  std::map<ClassKey, OpSizeStats> stats;
  std::map<Op, uint64_t> records;
  std::map<std::string, uint64_t> diagnoses;
  double wait_seconds = 0.0;
};

}  // namespace

std::string_view size_class(int size_bucket) {
  if (size_bucket < 16) return "small";   // < 64 KiB
  if (size_bucket < 24) return "medium";  // < 16 MiB
  return "large";
}

void add_window(std::vector<PromPortSeries>& ports, const FabricWindow& w) {
  for (const PortWindow& pw : w.ports) {
    auto it = std::find_if(ports.begin(), ports.end(), [&](const PromPortSeries& p) {
      return p.device == pw.device && p.port == pw.port;
    });
    if (it == ports.end()) {
      ports.push_back({});
      it = ports.end() - 1;
      it->device = pw.device;
      it->port = pw.port;
      it->netdev = pw.netdev;
    }
    node::add_port_interval(*it, pw.by_category, pw.deltas, pw.state, pw.speed_mbps);
  }
}

std::string format_prometheus(const PromProcess& process, const std::vector<const PromCommSeries*>& comms) {
  const core::PromIdentity& id = process.id;
  std::map<ShapeKey, Shape> shapes;
  for (const PromCommSeries* c : comms) {
    const int rank = id.rank >= 0 ? id.rank : c->rank;
    Shape& s = shapes[{rank, c->nranks, c->nnodes}];
    for (const auto& [key, st] : c->stats) s.stats[{key.first, size_class(key.second)}].merge(st);
    for (const auto& [op, n] : c->records) s.records[op] += n;
    for (const auto& [diag_id, n] : c->diagnoses) s.diagnoses[diag_id] += n;
    if (c->live) s.wait_seconds = std::max(s.wait_seconds, c->wait_seconds);
  }
  auto shape_labels = [&](const ShapeKey& k) {
    return fmt::format("{},comm_ranks=\"{}\",comm_nodes=\"{}\"",
                       core::prom_identity_labels(id, std::get<0>(k)), std::get<1>(k), std::get<2>(k));
  };
  // Process-wide series (drops, ports, the timestamp) name the lowest rank the process holds when the
  // launcher names none.
  int lowest_rank = -1;
  for (const PromCommSeries* c : comms)
    if (c->rank >= 0 && (lowest_rank < 0 || c->rank < lowest_rank)) lowest_rank = c->rank;
  const std::string process_labels = core::prom_identity_labels(id, lowest_rank);
  auto class_labels = [&](const ShapeKey& k, const ClassKey& ck) {
    return fmt::format("{},op=\"{}\",size_class=\"{}\"", shape_labels(k), op_name(ck.first), ck.second);
  };
  std::string out;
  family(out, "railscope_busbw_bytes_per_second", "histogram",
         "Bus bandwidth of each operation as nccl-tests defines it (algbw times the busbw factor), bytes per "
         "second, by operation and size class.",
         [&](std::string& s) {
           for (const auto& [key, shape] : shapes)
             for (const auto& [ck, st] : shape.stats) {
               const std::string labels = class_labels(key, ck);
               uint64_t cumulative = 0;
               size_t next = 0;
               for (size_t b : kBusbwBounds) {
                 for (; next <= b; ++next) cumulative += st.busbw_bins[next];
                 s +=
                     fmt::format("railscope_busbw_bytes_per_second_bucket{{{},le=\"{}\"}} {}\n", labels,
                                 bound(kBusbwBinsGbs[b] >= 1e299 ? kBusbwBinsGbs[b] : kBusbwBinsGbs[b] * 1e9),
                                 cumulative);
               }
               s += fmt::format("railscope_busbw_bytes_per_second_sum{{{}}} {:.9g}\n", labels,
                                st.busbw_sum * 1e9);
               s += fmt::format("railscope_busbw_bytes_per_second_count{{{}}} {}\n", labels, st.count);
             }
         });
  family(
      out, "railscope_collective_duration_seconds", "summary",
      "Completion time of the operations with a time (GPU time when known), seconds, by operation and size "
      "class.",
      [&](std::string& s) {
        for (const auto& [key, shape] : shapes)
          for (const auto& [ck, st] : shape.stats) {
            const std::string labels = class_labels(key, ck);
            s += fmt::format("railscope_collective_duration_seconds_sum{{{}}} {:.9g}\n", labels,
                             st.time_sum_us * 1e-6);
            s += fmt::format("railscope_collective_duration_seconds_count{{{}}} {}\n", labels, st.count);
          }
      });
  family(out, "railscope_operations_total", "counter",
         "Collective and point-to-point operations recorded in the profile, with or without a time.",
         [&](std::string& s) {
           for (const auto& [key, shape] : shapes)
             for (const auto& [op, n] : shape.records)
               s += fmt::format("railscope_operations_total{{{},op=\"{}\"}} {}\n", shape_labels(key),
                                op_name(op), n);
         });
  family(out, "railscope_collective_wait_seconds", "gauge",
         "How long the oldest operation this rank started and has not completed has been in flight, seconds; "
         "0 when none is.",
         [&](std::string& s) {
           for (const auto& [key, shape] : shapes)
             s += fmt::format("railscope_collective_wait_seconds{{{}}} {:.3f}\n", shape_labels(key),
                              shape.wait_seconds);
         });
  family(out, "railscope_diagnoses_total", "counter", "Diagnoses raised by the profiler, by catalogue id.",
         [&](std::string& s) {
           for (const auto& [key, shape] : shapes)
             for (const auto& [diag_id, n] : shape.diagnoses)
               s += fmt::format("railscope_diagnoses_total{{{},id=\"{}\"}} {}\n", shape_labels(key),
                                core::prom_label_value(diag_id), n);
         });
  family(out, "railscope_communicator_info", "gauge",
         "One per live communicator: its id (as in the profile) and name beside the shape its series carry.",
         [&](std::string& s) {
           for (const PromCommSeries* c : comms)
             if (c->live)
               s += fmt::format(
                   "railscope_communicator_info{{{},comm_ranks=\"{}\",comm_nodes=\"{}\",comm=\"{}\","
                   "comm_name=\"{}\",comm_rank=\"{}\"}} 1\n",
                   core::prom_identity_labels(id, c->rank), c->nranks, c->nnodes,
                   core::prom_label_value(c->comm), core::prom_label_value(c->name), c->rank);
         });
  family(out, "railscope_events_dropped_total", "counter",
         "Profiler events dropped because a fixed pool or queue was full, by kind.", [&](std::string& s) {
           std::map<std::string, uint64_t> drops;
           for (const PromCommSeries* c : comms)
             for (const auto& [kind, n] : c->drops) drops[kind] += n;
           for (const auto& [kind, n] : drops)
             s += fmt::format("railscope_events_dropped_total{{{},kind=\"{}\"}} {}\n", process_labels,
                              core::prom_label_value(kind), n);
         });
  // Every process on a node samples the same ports: when the launcher names local ranks, local rank 0
  // alone writes them, so a node's ports are one set of series whatever its number of GPUs.
  const std::vector<PromPortSeries> no_ports;
  const std::vector<PromPortSeries>& ports = id.local_rank > 0 ? no_ports : process.ports;
  node::append_port_series(out, "railscope_port", ports, process_labels);
  family(out, "railscope_profiler_last_write_timestamp_seconds", "gauge",
         "When this process last wrote this file (Unix time); a file whose time stops moving belongs to a "
         "process that has ended.",
         [&](std::string& s) {
           s += fmt::format("railscope_profiler_last_write_timestamp_seconds{{{},pid=\"{}\"}} {:.3f}\n",
                            process_labels, process.pid, process.unix_seconds);
         });
  return out;
}

}  // namespace railscope::profiler
