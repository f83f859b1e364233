// SPDX-License-Identifier: Apache-2.0
// NCCL's example-tuner CSV rule: collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,
// nRanks[,numPipeOps[,regBuff]] with -1 meaning "any" (or "NCCL's default" for channels).
#include <fmt/format.h>

#include <vector>

#include "plugin/tuner/config/line_parsers.h"
#include "plugin/tuner/config/values.h"

namespace railscope::tuner::detail {
namespace {

struct Field {
  std::string_view text;
  int column = 1;
};

std::vector<Field> split_fields(std::string_view line) {
  std::vector<Field> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    std::string_view f =
        line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    int col = static_cast<int>(start) + 1;
    while (!f.empty() && (f.front() == ' ' || f.front() == '\t')) {
      f.remove_prefix(1);
      ++col;
    }
    while (!f.empty() && (f.back() == ' ' || f.back() == '\t' || f.back() == '\r')) f.remove_suffix(1);
    out.push_back({f, col});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

// -1 = any; otherwise a value in [min, max].
bool wildcard_int(const Field& f, const char* what, int64_t min, int64_t max, const LineSink& sink,
                  int64_t& out) {
  auto v = values::integer(f.text);
  if (!values::ok(v)) {
    return sink.error(f.column, fmt::format("{}: {}", what, std::get<1>(v)));
  }
  out = std::get<0>(v);
  if (out != -1 && (out < min || out > max)) {
    return sink.error(f.column,
                      fmt::format("{}: {} is outside [{}, {}] (or -1 for any)", what, out, min, max));
  }
  return true;
}

Range exact_or_any(int64_t v) {
  Range r;
  if (v >= 0) r.lo = r.hi = static_cast<uint64_t>(v);
  return r;
}

}  // namespace

bool is_csv_line(std::string_view text) {
  const size_t comma = text.find(',');
  if (comma == std::string_view::npos) return false;
  std::string_view first = text.substr(0, comma);
  while (!first.empty() && (first.front() == ' ' || first.front() == '\t')) first.remove_prefix(1);
  while (!first.empty() && (first.back() == ' ' || first.back() == '\t')) first.remove_suffix(1);
  return parse_coll(first).has_value();
}

bool parse_csv_line(std::string_view text, const LineSink& sink, Config& config) {
  const std::vector<Field> f = split_fields(text);
  if (f.size() < 8 || f.size() > 10) {
    return sink.error(
        1, fmt::format("NCCL tuner CSV rule has {} fields; expected 8 to 10: collective,min_bytes,"
                       "max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]",
                       f.size()));
  }
  Rule r;
  r.format = RuleFormat::NcclCsv;
  r.line = sink.line;
  r.coll_mask = 1u << *parse_coll(f[0].text);  // is_csv_line checked it
  auto lo = values::size(f[1].text);
  if (!values::ok(lo)) return sink.error(f[1].column, "min_bytes: " + std::get<1>(lo));
  auto hi = values::size(f[2].text);
  if (!values::ok(hi)) return sink.error(f[2].column, "max_bytes: " + std::get<1>(hi));
  r.bytes = {std::get<0>(lo), std::get<0>(hi)};
  if (r.bytes.lo > r.bytes.hi)
    return sink.error(f[1].column,
                      fmt::format("size range {}..{} is empty (min above max)", r.bytes.lo, r.bytes.hi));
  const auto algo = parse_algo(f[3].text);
  if (!algo)
    return sink.error(f[3].column,
                      fmt::format("unknown algorithm '{}' (tree, ring, collnet_direct, collnet_chain, "
                                  "nvls, nvls_tree, pat)",
                                  f[3].text));
  const auto proto = parse_proto(f[4].text);
  if (!proto)
    return sink.error(f[4].column, fmt::format("unknown protocol '{}' (ll, ll128, simple)", f[4].text));
  if (!algo_proto_possible(*algo, *proto))
    return sink.error(f[4].column,
                      fmt::format("{} runs only with simple, not {}", algo_name(*algo), proto_name(*proto)));
  r.algo = *algo;
  r.proto = *proto;
  int64_t channels = 0, nodes = 0, ranks = 0, pipe = -1, reg = -1;
  if (!wildcard_int(f[5], "channels", 1, 64, sink, channels)) return false;
  if (!wildcard_int(f[6], "nNodes", 1, 1 << 20, sink, nodes)) return false;
  if (!wildcard_int(f[7], "nRanks", 1, 1 << 24, sink, ranks)) return false;
  if (f.size() > 8 && !wildcard_int(f[8], "numPipeOps", 0, 1 << 20, sink, pipe)) return false;
  if (f.size() > 9 && !wildcard_int(f[9], "regBuff", 0, 1, sink, reg)) return false;
  r.channels = channels < 0 ? 0 : static_cast<int>(channels);
  r.nodes = exact_or_any(nodes);
  r.ranks = exact_or_any(ranks);
  r.pipe_ops = exact_or_any(pipe);
  r.reg_buff = static_cast<int>(reg);
  config.rules.push_back(r);
  return true;
}

}  // namespace railscope::tuner::detail
