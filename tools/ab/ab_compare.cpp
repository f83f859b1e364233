// SPDX-License-Identifier: Apache-2.0
#include "ab_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "railscope/cli/json_figure.h"

namespace railscope::ab {
namespace {

using KeySet = std::set<OpKey>;

KeySet keys_of(const RunSamples& run) {
  KeySet keys;
  for (const auto& s : run.samples) keys.emplace(s.op, s.bytes);
  return keys;
}

std::string describe_keys(const std::vector<OpKey>& keys) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(keys.size(), 5);
  for (std::size_t i = 0; i < shown; ++i) {
    if (i != 0) out += ", ";
    out += fmt::format("{} {}", keys[i].first, format_size(keys[i].second));
  }
  if (keys.size() > shown) out += fmt::format(" (+{} more)", keys.size() - shown);
  return out;
}

std::string key_set_difference(const RunSamples& ref, const KeySet& ref_keys, const RunSamples& other,
                               const KeySet& other_keys) {
  std::vector<OpKey> only_ref, only_other;
  std::set_difference(ref_keys.begin(), ref_keys.end(), other_keys.begin(), other_keys.end(),
                      std::back_inserter(only_ref));
  std::set_difference(other_keys.begin(), other_keys.end(), ref_keys.begin(), ref_keys.end(),
                      std::back_inserter(only_other));
  if (only_ref.empty() && only_other.empty()) return {};
  std::string msg =
      fmt::format("refusing to compare: runs measured different op/size sets ({} in {} vs {} in {})",
                  ref.label, ref.folder, other.label, other.folder);
  if (!only_ref.empty()) msg += fmt::format("; only in {}: {}", ref.label, describe_keys(only_ref));
  if (!only_other.empty()) msg += fmt::format("; only in {}: {}", other.label, describe_keys(only_other));
  msg += ". Run the same job with the same sizes in both variants.";
  return msg;
}

Stats stats_of(const std::vector<RunSamples>& runs, const OpKey& key) {
  std::vector<double> busbw, time;
  for (const auto& run : runs) {
    for (const auto& s : run.samples) {
      if (s.op == key.first && s.bytes == key.second) {
        busbw.push_back(s.busbw_gbps);
        time.push_back(s.time_us);
      }
    }
  }
  Stats st;
  st.count = busbw.size();
  st.busbw_p50 = percentile(busbw, 50);
  // The slow tail, as `railscope report` shows it: 99 % of the samples were at least this fast.
  st.busbw_p1 = percentile(busbw, 1);
  st.time_p50 = percentile(time, 50);
  st.time_p99 = percentile(time, 99);
  return st;
}

}  // namespace

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(q / 100.0 * static_cast<double>(values.size()));
  const auto idx = static_cast<std::size_t>(std::max(rank, 1.0)) - 1;
  return values[std::min(idx, values.size() - 1)];
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  std::uint64_t v = bytes;
  while (unit + 1 < std::size(kUnits) && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++unit;
  }
  return fmt::format("{} {}", v, kUnits[unit]);
}

std::string compare_runs(const std::vector<RunSamples>& a_runs, const std::vector<RunSamples>& b_runs,
                         Comparison& out) {
  std::vector<const RunSamples*> all;
  for (const auto& r : a_runs) all.push_back(&r);
  for (const auto& r : b_runs) all.push_back(&r);
  if (a_runs.empty() || b_runs.empty()) return "nothing to compare: a variant has no runs";
  for (const auto* run : all) {
    if (run->samples.empty())
      return fmt::format(
          "run {} left no op records in {} (was the profiler loaded? check NCCL_DEBUG=INFO for "
          "'PROFILER/Plugin: Loaded')",
          run->label, run->folder);
  }
  const KeySet ref_keys = keys_of(*all.front());
  for (std::size_t i = 1; i < all.size(); ++i) {
    if (auto why = key_set_difference(*all.front(), ref_keys, *all[i], keys_of(*all[i])); !why.empty())
      return why;
  }
  out.label_a = a_runs.front().label;
  out.label_b = b_runs.front().label;
  out.rows.clear();
  for (const auto& key : ref_keys) {
    ComparisonRow row{key, stats_of(a_runs, key), stats_of(b_runs, key), 0};
    row.ratio = row.b.busbw_p50 > 0 ? row.a.busbw_p50 / row.b.busbw_p50 : 0;
    out.rows.push_back(row);
  }
  return {};
}

std::string format_table(const Comparison& cmp) {
  std::string out = fmt::format("{:<14} {:>9} | {:>26} | {:>26} | {:>7}\n", "op", "size",
                                fmt::format("{} busbw p50/p1 GB/s", cmp.label_a),
                                fmt::format("{} busbw p50/p1 GB/s", cmp.label_b), "ratio");
  out += fmt::format("{:<14} {:>9} | {:>26} | {:>26} | {:>7}\n", "", "", "time p50/p99 us", "time p50/p99 us",
                     "");
  out += std::string(94, '-') + "\n";
  for (const auto& r : cmp.rows) {
    out += fmt::format("{:<14} {:>9} | {:>12.3f} / {:>11.3f} | {:>12.3f} / {:>11.3f} | {:>6.2f}x\n",
                       r.key.first, format_size(r.key.second), r.a.busbw_p50, r.a.busbw_p1, r.b.busbw_p50,
                       r.b.busbw_p1, r.ratio);
    out += fmt::format("{:<14} {:>9} | {:>12.1f} / {:>11.1f} | {:>12.1f} / {:>11.1f} |\n", "", "",
                       r.a.time_p50, r.a.time_p99, r.b.time_p50, r.b.time_p99);
  }
  out += fmt::format("ratio = {} busbw p50 / {} busbw p50 (> 1: {} is faster)\n", cmp.label_a, cmp.label_b,
                     cmp.label_a);
  return out;
}

std::string format_json(const Comparison& cmp, const nlohmann::json& extra) {
  nlohmann::json rows = nlohmann::json::array();
  auto stats_json = [](const Stats& s) {
    return nlohmann::json{{"samples", s.count},
                          {"busbw_p50_gbs", cli::json_figure(s.busbw_p50)},
                          {"busbw_p1_gbs", cli::json_figure(s.busbw_p1)},
                          {"time_p50_us", cli::json_figure(s.time_p50)},
                          {"time_p99_us", cli::json_figure(s.time_p99)}};
  };
  for (const auto& r : cmp.rows) {
    rows.push_back({{"op", r.key.first},
                    {"bytes", r.key.second},
                    {cmp.label_a, stats_json(r.a)},
                    {cmp.label_b, stats_json(r.b)},
                    {"ratio", cli::json_figure(r.ratio)}});
  }
  nlohmann::json doc{{"a", cmp.label_a}, {"b", cmp.label_b}, {"rows", rows}};
  if (extra.is_object()) doc.update(extra);
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace railscope::ab
