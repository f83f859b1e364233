// SPDX-License-Identifier: Apache-2.0
// railscope's own rule format: a directive then `key=value` pairs separated by blanks.
//   rule    coll=allreduce[,allgather|*] [bytes=R] [nodes=R] [ranks=R] [pipeops=R] [regbuff=0|1|*]
//           [algo=A] [proto=P] [channels=N] [chunk=SIZE]
//   measure coll=C algo=A proto=P nodes=N lat_us=X busbw_GBps=Y
//   node    [nics=N] [nic_gbit=X] [link_layer=infiniband|ethernet] [intra=nvlink|pcie] [intra_GBps=X]
//   cluster nodes=N ranks_per_node=N [gpu=NAME] [nic=NAME] [nic_gbit=X] [nics=N] [rail_GBps=X]
//                                                                                 (calibration)
//   point   coll=C bytes=SIZE algo=A proto=P ranks=N nodes=N busbw_GBps=X samples=N [spread_GBps=X]
//           [channels=N] [source=NAME]                                           (calibration)
// Units in key names: GBps = 10^9 bytes/s, gbit = 10^9 bits/s. Keys match case-insensitively,
// so files that say busbw_gbps or intra_gbps (GB/s, as before) read the same. The NIC rate was
// nic_gbps (Gbit/s): that exact spelling is still read as Gbit/s with a deprecation note; any other
// case of it (nic_GBps) is refused, since by the convention it would mean bytes.
// R is a range: `lo..hi`, `lo..`, `..hi`, a single value, or `*`; sizes take K/M/G/T suffixes.
#include <strings.h>

#include <fmt/format.h>

#include <functional>
#include <map>
#include <vector>

#include "plugin/tuner/config/line_parsers.h"
#include "plugin/tuner/config/values.h"

namespace railscope::tuner::detail {
namespace {

struct Token {
  std::string_view key, value;
  int key_column = 1, value_column = 1;
};

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// Splits `key=value` pairs; reports a token without '=' or a repeated key.
bool tokenize(std::string_view text, size_t from, const LineSink& sink, std::vector<Token>& out) {
  size_t i = from;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
    if (i >= text.size()) break;
    const size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\r') ++i;
    const std::string_view tok = text.substr(start, i - start);
    const size_t eq = tok.find('=');
    const int col = static_cast<int>(start) + 1;
    if (eq == std::string_view::npos || eq == 0)
      return sink.error(col, fmt::format("expected key=value, found '{}'", tok));
    Token t{tok.substr(0, eq), tok.substr(eq + 1), col, col + static_cast<int>(eq) + 1};
    for (const Token& o : out)
      if (iequal(o.key, t.key)) return sink.error(col, fmt::format("key '{}' given twice", t.key));
    if (t.value.empty()) return sink.error(t.value_column, fmt::format("key '{}' has no value", t.key));
    out.push_back(t);
  }
  return true;
}

using Handler = std::function<bool(const Token&)>;

// Runs the handler of each token's key; an unknown key is an error naming the keys allowed.
bool dispatch(const std::vector<Token>& tokens, const std::map<std::string_view, Handler>& handlers,
              std::string_view directive, const LineSink& sink) {
  for (const Token& t : tokens) {
    const Handler* h = nullptr;
    for (const auto& [k, fn] : handlers)
      if (iequal(k, t.key)) h = &fn;
    if (h == nullptr) {
      std::string allowed;
      for (const auto& [k, fn] : handlers) allowed += (allowed.empty() ? "" : ", ") + std::string(k);
      return sink.error(t.key_column,
                        fmt::format("unknown key '{}' for '{}' (allowed: {})", t.key, directive, allowed));
    }
    if (!(*h)(t)) return false;
  }
  return true;
}

bool set_range(const Token& t, const LineSink& sink, Range& out) {
  auto r = values::range(t.value);
  if (!values::ok(r)) return sink.error(t.value_column, fmt::format("{}: {}", t.key, std::get<1>(r)));
  out = std::get<0>(r);
  return true;
}

bool set_int(const Token& t, const LineSink& sink, int64_t min, int64_t max, int& out) {
  auto v = values::integer(t.value);
  if (!values::ok(v)) return sink.error(t.value_column, fmt::format("{}: {}", t.key, std::get<1>(v)));
  if (std::get<0>(v) < min || std::get<0>(v) > max)
    return sink.error(t.value_column,
                      fmt::format("{}: {} is outside [{}, {}]", t.key, std::get<0>(v), min, max));
  out = static_cast<int>(std::get<0>(v));
  return true;
}

// Bounds of the decimal figures: bandwidths in GB/s (or Gbit/s for a NIC) as RAILSCOPE_TUNER_*_GBPS
// take them (at most 100000), latencies in µs up to 100 s.
constexpr double kMinGbps = 1e-3, kMaxGbps = 1e5;
constexpr double kMinLatencyUs = 1e-3, kMaxLatencyUs = 1e8;

bool set_decimal(const Token& t, const LineSink& sink, double min, double max, double& out) {
  auto v = values::positive_decimal(t.value, min, max);
  if (!values::ok(v)) return sink.error(t.value_column, fmt::format("{}: {}", t.key, std::get<1>(v)));
  out = std::get<0>(v);
  return true;
}

bool set_algo(const Token& t, const LineSink& sink, int& out) {
  auto a = parse_algo(t.value);
  if (!a)
    return sink.error(t.value_column, fmt::format("unknown algorithm '{}' (tree, ring, collnet_direct, "
                                                  "collnet_chain, nvls, nvls_tree, pat)",
                                                  t.value));
  out = *a;
  return true;
}

bool set_proto(const Token& t, const LineSink& sink, int& out) {
  auto p = parse_proto(t.value);
  if (!p)
    return sink.error(t.value_column, fmt::format("unknown protocol '{}' (ll, ll128, simple)", t.value));
  out = *p;
  return true;
}

// "allreduce,allgather" or "*".
bool set_colls(const Token& t, const LineSink& sink, uint32_t& mask) {
  if (t.value == "*") {
    mask = (1u << kNumColls) - 1;
    return true;
  }
  size_t start = 0;
  while (start <= t.value.size()) {
    const size_t comma = t.value.find(',', start);
    const std::string_view name =
        t.value.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    auto c = parse_coll(name);
    if (!c)
      return sink.error(t.value_column + static_cast<int>(start),
                        fmt::format("unknown collective '{}' (broadcast, reduce, allgather, reducescatter, "
                                    "allreduce, or *)",
                                    name));
    mask |= 1u << *c;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return true;
}

bool parse_rule(const std::vector<Token>& tokens, const LineSink& sink, Config& config, int& range_col) {
  Rule r;
  r.line = sink.line;
  bool any_action = false;
  range_col = 1;
  auto mark_range = [&](const Token& t) {
    if (range_col == 1) range_col = t.key_column;
  };
  const std::map<std::string_view, Handler> handlers = {
      {"coll", [&](const Token& t) { return set_colls(t, sink, r.coll_mask); }},
      {"bytes", [&](const Token& t) { return mark_range(t), set_range(t, sink, r.bytes); }},
      {"nodes", [&](const Token& t) { return mark_range(t), set_range(t, sink, r.nodes); }},
      {"ranks", [&](const Token& t) { return mark_range(t), set_range(t, sink, r.ranks); }},
      {"pipeops", [&](const Token& t) { return mark_range(t), set_range(t, sink, r.pipe_ops); }},
      {"regbuff",
       [&](const Token& t) {
         if (t.value == "*") return true;
         return set_int(t, sink, 0, 1, r.reg_buff);
       }},
      {"algo", [&](const Token& t) { return any_action = true, set_algo(t, sink, r.algo); }},
      {"proto", [&](const Token& t) { return any_action = true, set_proto(t, sink, r.proto); }},
      {"channels", [&](const Token& t) { return any_action = true, set_int(t, sink, 1, 64, r.channels); }},
      {"chunk",
       [&](const Token& t) {
         any_action = true;
         auto v = values::size(t.value);
         if (!values::ok(v)) return sink.error(t.value_column, "chunk: " + std::get<1>(v));
         if (std::get<0>(v) == 0) return sink.error(t.value_column, "chunk: must be greater than 0");
         r.chunk = std::get<0>(v);
         return true;
       }},
  };
  if (!dispatch(tokens, handlers, "rule", sink)) return false;
  if (r.coll_mask == 0) return sink.error(1, "rule needs coll=<collective,...|*>");
  if (!any_action) return sink.error(1, "rule pins nothing: give algo=, proto=, channels= or chunk=");
  if (r.algo >= 0 && r.proto >= 0 && !algo_proto_possible(r.algo, r.proto))
    return sink.error(
        1, fmt::format("{} runs only with simple, not {}", algo_name(r.algo), proto_name(r.proto)));
  if (r.chunk != 0 && (!r.pipe_ops.is_any() || r.reg_buff >= 0))
    return sink.error(1,
                      "chunk= cannot be combined with pipeops= or regbuff= (NCCL does not pass them when it "
                      "asks for a chunk size)");
  config.rules.push_back(r);
  return true;
}

bool parse_measure(const std::vector<Token>& tokens, const LineSink& sink, Config& config) {
  MeasuredFigure m;
  uint32_t mask = 0;
  bool has_algo = false, has_proto = false, has_nodes = false, has_lat = false, has_bw = false;
  const std::map<std::string_view, Handler> handlers = {
      {"coll", [&](const Token& t) { return set_colls(t, sink, mask); }},
      {"algo", [&](const Token& t) { return has_algo = true, set_algo(t, sink, m.algo); }},
      {"proto", [&](const Token& t) { return has_proto = true, set_proto(t, sink, m.proto); }},
      {"nodes", [&](const Token& t) { return has_nodes = true, set_int(t, sink, 1, 1 << 20, m.nodes); }},
      {"lat_us",
       [&](const Token& t) {
         return has_lat = true, set_decimal(t, sink, kMinLatencyUs, kMaxLatencyUs, m.lat_us);
       }},
      {"busbw_GBps",
       [&](const Token& t) { return has_bw = true, set_decimal(t, sink, kMinGbps, kMaxGbps, m.busbw_gbs); }},
  };
  if (!dispatch(tokens, handlers, "measure", sink)) return false;
  if (!(has_algo && has_proto && has_nodes && has_lat && has_bw) || mask == 0)
    return sink.error(1, "measure needs coll=, algo=, proto=, nodes=, lat_us= and busbw_GBps=");
  if (!algo_proto_possible(m.algo, m.proto))
    return sink.error(
        1, fmt::format("{} runs only with simple, not {}", algo_name(m.algo), proto_name(m.proto)));
  for (int c = 0; c < kNumColls; ++c) {
    if (!(mask >> c & 1u)) continue;
    MeasuredFigure one = m;
    one.coll = c;
    config.measured.push_back({one, sink.line});
  }
  return true;
}

bool parse_node(const std::vector<Token>& tokens, const LineSink& sink, Config& config) {
  NodeOverrides n;
  n.nic_source = n.intra_source = "config";
  const std::map<std::string_view, Handler> handlers = {
      {"nics",
       [&](const Token& t) {
         int v = 0;
         return set_int(t, sink, 0, 64, v) && (n.nics = v, true);
       }},
      {"nic_gbit",
       [&](const Token& t) {
         double v = 0;
         return set_decimal(t, sink, kMinGbps, kMaxGbps, v) && (n.nic_gbps = v, true);
       }},
      {"nic_gbps",
       [&](const Token& t) {
         if (t.key != "nic_gbps")
           return sink.error(t.key_column,
                             fmt::format("'{}' would be GB/s (GBps = 10^9 bytes/s); the NIC rate is "
                                         "nic_gbit=, in Gbit/s",
                                         t.key));
         sink.deprecated(t.key_column, "nic_gbps= is deprecated: write nic_gbit= (same value, Gbit/s)");
         double v = 0;
         return set_decimal(t, sink, kMinGbps, kMaxGbps, v) && (n.nic_gbps = v, true);
       }},
      {"intra_GBps",
       [&](const Token& t) {
         double v = 0;
         return set_decimal(t, sink, kMinGbps, kMaxGbps, v) && (n.intra_gbps = v, true);
       }},
      {"link_layer",
       [&](const Token& t) {
         if (iequal(t.value, "infiniband") || iequal(t.value, "ib"))
           return n.layer = LinkLayer::InfiniBand, true;
         if (iequal(t.value, "ethernet") || iequal(t.value, "roce"))
           return n.layer = LinkLayer::Ethernet, true;
         return sink.error(t.value_column,
                           fmt::format("unknown link_layer '{}' (infiniband, ethernet)", t.value));
       }},
      {"intra",
       [&](const Token& t) {
         if (iequal(t.value, "nvlink")) return n.intra = IntraLink::NvLink, true;
         if (iequal(t.value, "pcie")) return n.intra = IntraLink::Pcie, true;
         return sink.error(t.value_column, fmt::format("unknown intra link '{}' (nvlink, pcie)", t.value));
       }},
  };
  if (!dispatch(tokens, handlers, "node", sink)) return false;
  config.node = merge(n, config.node);
  return true;
}

// A name without blanks, '=' or '#': GPU and NIC models, a point's source file.
bool set_word(const Token& t, const LineSink& sink, std::string& out) {
  for (size_t i = 0; i < t.value.size(); ++i) {
    const auto ch = static_cast<unsigned char>(t.value[i]);
    if (ch < 0x21 || ch == 0x7f || ch == '=')
      return sink.error(t.value_column + static_cast<int>(i),
                        fmt::format("{}: a control character or '=' in the value", t.key));
  }
  out = std::string(t.value);
  return true;
}

bool parse_cluster(const std::vector<Token>& tokens, const LineSink& sink, Config& config) {
  if (config.cluster)
    return sink.error(1,
                      fmt::format("a second cluster line (the first is at line {})", config.cluster->line));
  ClusterPrint c;
  c.line = sink.line;
  const std::map<std::string_view, Handler> handlers = {
      {"gpu", [&](const Token& t) { return set_word(t, sink, c.gpu); }},
      {"nic", [&](const Token& t) { return set_word(t, sink, c.nic); }},
      {"nic_gbit", [&](const Token& t) { return set_decimal(t, sink, kMinGbps, kMaxGbps, c.nic_gbit); }},
      {"nics", [&](const Token& t) { return set_int(t, sink, 1, 64, c.nics); }},
      {"rail_GBps", [&](const Token& t) { return set_decimal(t, sink, kMinGbps, kMaxGbps, c.rail_gbs); }},
      {"nodes", [&](const Token& t) { return set_int(t, sink, 1, 1 << 20, c.nodes); }},
      {"ranks_per_node", [&](const Token& t) { return set_int(t, sink, 1, 1024, c.ranks_per_node); }},
  };
  if (!dispatch(tokens, handlers, "cluster", sink)) return false;
  if (c.nodes == 0 || c.ranks_per_node == 0) return sink.error(1, "cluster needs nodes= and ranks_per_node=");
  config.cluster = c;
  return true;
}

bool parse_point(const std::vector<Token>& tokens, const LineSink& sink, Config& config) {
  CalibrationPoint pt;
  pt.line = sink.line;
  pt.algo = pt.proto = pt.coll = -1;
  bool has_bytes = false, has_bw = false;
  const std::map<std::string_view, Handler> handlers = {
      {"coll",
       [&](const Token& t) {
         auto c = parse_coll(t.value);
         if (!c)
           return sink.error(t.value_column, fmt::format("unknown collective '{}' (broadcast, reduce, "
                                                         "allgather, reducescatter, allreduce)",
                                                         t.value));
         return pt.coll = *c, true;
       }},
      {"bytes",
       [&](const Token& t) {
         auto v = values::size(t.value);
         if (!values::ok(v)) return sink.error(t.value_column, "bytes: " + std::get<1>(v));
         if (std::get<0>(v) == 0) return sink.error(t.value_column, "bytes: must be greater than 0");
         return pt.bytes = std::get<0>(v), has_bytes = true;
       }},
      {"algo", [&](const Token& t) { return set_algo(t, sink, pt.algo); }},
      {"proto", [&](const Token& t) { return set_proto(t, sink, pt.proto); }},
      {"channels", [&](const Token& t) { return set_int(t, sink, 1, 64, pt.channels); }},
      {"ranks", [&](const Token& t) { return set_int(t, sink, 2, 1 << 24, pt.ranks); }},
      {"nodes", [&](const Token& t) { return set_int(t, sink, 1, 1 << 20, pt.nodes); }},
      {"busbw_GBps",
       [&](const Token& t) { return has_bw = true, set_decimal(t, sink, kMinGbps, kMaxGbps, pt.busbw_gbs); }},
      {"spread_GBps",
       [&](const Token& t) {
         if (t.value == "0") return pt.spread_gbs = 0, true;
         return set_decimal(t, sink, kMinGbps, kMaxGbps, pt.spread_gbs);
       }},
      {"samples", [&](const Token& t) { return set_int(t, sink, 1, 1 << 30, pt.samples); }},
      {"source", [&](const Token& t) { return set_word(t, sink, pt.source); }},
  };
  if (!dispatch(tokens, handlers, "point", sink)) return false;
  if (pt.coll < 0 || pt.algo < 0 || pt.proto < 0 || !has_bytes || pt.ranks == 0 || pt.nodes == 0 || !has_bw ||
      pt.samples == 0)
    return sink.error(1,
                      "point needs coll=, bytes=, algo=, proto=, ranks=, nodes=, busbw_GBps= and samples=");
  if (!algo_proto_possible(pt.algo, pt.proto))
    return sink.error(
        1, fmt::format("{} runs only with simple, not {}", algo_name(pt.algo), proto_name(pt.proto)));
  if (pt.nodes > pt.ranks)
    return sink.error(1, fmt::format("nodes={} is more than ranks={}", pt.nodes, pt.ranks));
  config.points.push_back(std::move(pt));
  return true;
}

}  // namespace

bool parse_railscope_line(std::string_view text, const LineSink& sink, Config& config, int& range_col) {
  size_t start = 0;
  while (start < text.size() && (text[start] == ' ' || text[start] == '\t')) ++start;
  size_t end = start;
  while (end < text.size() && text[end] != ' ' && text[end] != '\t' && text[end] != '\r') ++end;
  const std::string_view directive = text.substr(start, end - start);
  std::vector<Token> tokens;
  if (!iequal(directive, "rule") && !iequal(directive, "measure") && !iequal(directive, "node") &&
      !iequal(directive, "cluster") && !iequal(directive, "point"))
    return sink.error(
        static_cast<int>(start) + 1,
        fmt::format("unknown directive '{}' (rule, measure, node, cluster, point, or an NCCL CSV "
                    "rule)",
                    directive));
  if (!tokenize(text, end, sink, tokens)) return false;
  if (iequal(directive, "rule")) return parse_rule(tokens, sink, config, range_col);
  if (iequal(directive, "measure")) return parse_measure(tokens, sink, config);
  if (iequal(directive, "cluster")) return parse_cluster(tokens, sink, config);
  if (iequal(directive, "point")) return parse_point(tokens, sink, config);
  return parse_node(tokens, sink, config);
}

}  // namespace railscope::tuner::detail
