// SPDX-License-Identifier: Apache-2.0
// The vocabulary of the tuner: collectives, algorithms and protocols as NCCL numbers them (the cost
// table's indices), with the names users write in rules files and NCCL_ALGO / NCCL_PROTO.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string_view>

namespace railscope::tuner {

inline constexpr int kNumColls = 5;   // Broadcast, Reduce, AllGather, ReduceScatter, AllReduce
inline constexpr int kNumAlgos = 7;   // Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT
inline constexpr int kNumProtos = 3;  // LL, LL128, Simple

enum Coll : int { kBroadcast = 0, kReduce = 1, kAllGather = 2, kReduceScatter = 3, kAllReduce = 4 };
enum Algo : int {
  kTree = 0,
  kRing = 1,
  kCollNetDirect = 2,
  kCollNetChain = 3,
  kNvls = 4,
  kNvlsTree = 5,
  kPat = 6
};
enum Proto : int { kLL = 0, kLL128 = 1, kSimple = 2 };

// Lower-case names as in NCCL's example tuner CSV: "allreduce", "ring", "ll128".
std::string_view coll_name(int coll);
std::string_view algo_name(int algo);
std::string_view proto_name(int proto);

// Case-insensitive; accept the CSV spellings and NCCL_ALGO's ("collnet_direct" and "collnetdirect").
std::optional<int> parse_coll(std::string_view s);
std::optional<int> parse_algo(std::string_view s);
std::optional<int> parse_proto(std::string_view s);

// NVLS and NVLS-Tree run only with Simple; everything else with any protocol.
constexpr bool algo_proto_possible(int algo, int proto) {
  return !((algo == kNvls || algo == kNvlsTree) && proto != kSimple);
}

// Size bucket used to log each decision once: floor(log2(bytes)), 0 for 0 and 1.
constexpr int size_bucket(uint64_t bytes) {
  return bytes <= 1 ? 0 : static_cast<int>(std::bit_width(bytes)) - 1;
}

static_assert(size_bucket(0) == 0 && size_bucket(1) == 0 && size_bucket(4096) == 12 &&
              size_bucket(8191) == 12);
static_assert(size_bucket(~0ull) == 63);

}  // namespace railscope::tuner
