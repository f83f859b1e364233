// SPDX-License-Identifier: Apache-2.0
#include "calibrate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "tools/report/collective_busbw.h"

namespace railscope::cli::tuner_calibrate {

using namespace railscope::tuner;

namespace {

// (collective, algorithm, protocol, bytes, ranks, nodes)
using PointKey = std::tuple<int, int, int, uint64_t, int, int>;

struct Samples {
  report::CollectiveBusbw busbw;
  std::map<int, int> channels;  // channel count → records
  std::set<std::string> sources;
};

// A point's source: the profile's file name, blanks and '=' replaced (a value is one word).
std::string source_word(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (char& ch : name)
    if (static_cast<unsigned char>(ch) < 0x21 || ch == '=' || ch == '#' || ch == 0x7f) ch = '_';
  return name;
}

}  // namespace

Calibrated calibrate(const report::ProfileSet& profiles, const Fingerprint& print) {
  Calibrated out;
  std::map<PointKey, Samples> by_point;
  for (const report::CollRow& r : profiles.colls) {
    const auto coll = parse_coll(r.op);
    const auto algo = parse_algo(r.algo);
    const auto proto = parse_proto(r.proto);
    if (r.p2p || !r.complete || !r.busbw_gbs || *r.busbw_gbs <= 0 || !coll || !algo || !proto ||
        r.bytes == 0 || r.nranks < 2 || r.nnodes < 1) {
      ++out.records_skipped;

      continue;
    }
    Samples& s = by_point[{*coll, *algo, *proto, r.bytes, r.nranks, r.nnodes}];
    s.busbw.add({r.comm, r.ord.value_or(r.seq)}, *r.busbw_gbs);
    ++s.channels[r.channels];
    if (r.file < profiles.files.size()) s.sources.insert(source_word(profiles.files[r.file]));
    ++out.records_used;
  }

  std::map<std::pair<int, int>, size_t> shapes;  // (ranks, nodes) → samples
  for (const auto& [key, s] : by_point) {
    const auto& [coll, algo, proto, bytes, ranks, nodes] = key;
    const report::BusbwSpread bw = s.busbw.summary();
    CalibrationPoint p;
    p.coll = coll;
    p.algo = algo;
    p.proto = proto;
    p.bytes = bytes;
    p.ranks = ranks;
    p.nodes = nodes;
    p.busbw_gbs = bw.median_gbs;
    p.spread_gbs = bw.spread_gbs;
    p.samples = static_cast<int>(bw.collectives);
    p.channels = std::max_element(s.channels.begin(), s.channels.end(), [](auto& a, auto& b) {
                   return a.second < b.second;
                 })->first;
    for (const std::string& src : s.sources) p.source += (p.source.empty() ? "" : ",") + src;
    shapes[{ranks, nodes}] += bw.collectives;
    out.points.push_back(std::move(p));
  }
  if (!shapes.empty()) {
    const auto top =
        std::max_element(shapes.begin(), shapes.end(), [](auto& a, auto& b) { return a.second < b.second; });
    out.cluster.nodes = top->first.second;
    out.cluster.ranks_per_node = top->first.first / std::max(1, top->first.second);
  }
  out.cluster.gpu = print.gpu;
  out.cluster.nic = print.nic;
  out.cluster.nic_gbit = print.nic_gbit;
  out.cluster.nics = print.nics;
  out.cluster.rail_gbs = print.rail_gbs;
  out.origin = print.origin;
  return out;
}

std::string render(const Calibrated& c) {
  std::string out =
      "# railscope tuner calibration (docs/tuner.md): measured busbw per collective, size, algorithm and\n"
      "# protocol; busbw_GBps is the median over `samples` collectives (each its slowest rank), spread_GBps\n"
      "# half their interquartile range. Read by the tuner through RAILSCOPE_TUNER_CALIBRATION.\n";
  if (!c.origin.empty()) out += "# cluster facts: " + c.origin + "\n";
  const ClusterPrint& k = c.cluster;
  out += fmt::format("cluster nodes={} ranks_per_node={}", k.nodes, k.ranks_per_node);
  if (!k.gpu.empty()) out += " gpu=" + k.gpu;
  if (!k.nic.empty()) out += " nic=" + k.nic;
  if (k.nic_gbit > 0) out += fmt::format(" nic_gbit={}", k.nic_gbit);
  if (k.nics > 0) out += fmt::format(" nics={}", k.nics);
  // The file takes rates of 0.001 GB/s and more.
  if (k.rail_gbs >= 0.001) out += fmt::format(" rail_GBps={}", std::round(k.rail_gbs * 1000) / 1000);
  out += "\n";
  for (const CalibrationPoint& p : c.points) {
    // The file takes figures of 0.001 GB/s and more; a spread below that is none.
    out += fmt::format(
        "point coll={} bytes={} algo={} proto={} ranks={} nodes={} busbw_GBps={:.3f} "
        "spread_GBps={} samples={}",
        coll_name(p.coll), p.bytes, algo_name(p.algo), proto_name(p.proto), p.ranks, p.nodes,
        std::max(p.busbw_gbs, 0.001),
        p.spread_gbs < 0.001 ? std::string("0") : fmt::format("{:.3f}", p.spread_gbs), p.samples);
    if (p.channels > 0 && p.channels <= 64) out += fmt::format(" channels={}", p.channels);
    if (!p.source.empty()) out += " source=" + p.source;
    out += "\n";
  }
  return out;
}

}  // namespace railscope::cli::tuner_calibrate
