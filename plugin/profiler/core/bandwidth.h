// SPDX-License-Identifier: Apache-2.0
// The nccl-tests definitions of message size, algbw and busbw (nccl-tests' doc/PERFORMANCE.md), and the
// mapping of NCCL's operation and datatype names. Pure functions: used by the plugin and by `railscope
// report`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace railscope::profiler {

enum class Op : uint8_t {
  Unknown,
  Broadcast,
  Reduce,
  AllGather,
  ReduceScatter,
  AllReduce,
  SendRecv,
  Send,
  Recv,
  AlltoAll,
  Scatter,
  Gather,
};
inline constexpr int kNumOps = 12;

Op op_from_name(const char* name);            // NCCL's spelling ("AllReduce"); Unknown otherwise
Op op_from_nccl_func(int func);               // ncclFunc_t numbering (ABI v1)
std::string_view op_name(Op op);              // "AllReduce"; "Unknown"
const char* datatype_name_from_nccl(int dt);  // ncclDataType_t numbering (ABI v1) → "ncclFloat32"
const char* algo_name_from_nccl(int algo);    // NCCL_ALGO_* (ABI v1) → "RING"
const char* proto_name_from_nccl(int proto);  // NCCL_PROTO_* (ABI v1) → "SIMPLE"
// Bytes per element for NCCL's datatype name; 0 when unknown.
size_t datatype_size(const char* name);

// nccl-tests message size S in bytes: count·typesize, times nRanks for the gather/scatter family.
// nranks <= 0 (unknown) counts as 1.
uint64_t message_bytes(Op op, uint64_t count, size_t type_size, int nranks);
// busbw/algbw factor; nullopt when nranks is unknown (<= 0).
std::optional<double> busbw_factor(Op op, int nranks);
// GB/s with GB = 1e9; nullopt when time is not positive.
std::optional<double> algbw_gbs(uint64_t bytes, double time_us);

}  // namespace railscope::profiler
