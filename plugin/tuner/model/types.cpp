// SPDX-License-Identifier: Apache-2.0
#include "plugin/tuner/model/types.h"

#include <strings.h>

#include <array>
#include <string>

namespace railscope::tuner {
namespace {

constexpr std::array<std::string_view, kNumColls> kColls = {"broadcast", "reduce", "allgather",
                                                            "reducescatter", "allreduce"};
constexpr std::array<std::string_view, kNumAlgos> kAlgos = {
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
constexpr std::array<std::string_view, kNumProtos> kProtos = {"ll", "ll128", "simple"};

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

template <size_t N>
std::optional<int> find_name(const std::array<std::string_view, N>& names, std::string_view s) {
  for (size_t i = 0; i < N; ++i)
    if (iequal(names[i], s)) return static_cast<int>(i);
  return std::nullopt;
}

}  // namespace

std::string_view coll_name(int coll) {
  return coll >= 0 && coll < kNumColls ? kColls[static_cast<size_t>(coll)] : "?";
}
std::string_view algo_name(int algo) {
  return algo >= 0 && algo < kNumAlgos ? kAlgos[static_cast<size_t>(algo)] : "?";
}
std::string_view proto_name(int proto) {
  return proto >= 0 && proto < kNumProtos ? kProtos[static_cast<size_t>(proto)] : "?";
}

std::optional<int> parse_coll(std::string_view s) { return find_name(kColls, s); }

std::optional<int> parse_algo(std::string_view s) {
  if (auto a = find_name(kAlgos, s)) return a;
  // NCCL_ALGO spells the two-word names without the underscore.
  if (iequal(s, "collnetdirect")) return kCollNetDirect;
  if (iequal(s, "collnetchain")) return kCollNetChain;
  if (iequal(s, "nvlstree")) return kNvlsTree;
  return std::nullopt;
}

std::optional<int> parse_proto(std::string_view s) { return find_name(kProtos, s); }

}  // namespace railscope::tuner
