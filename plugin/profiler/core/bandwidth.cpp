// SPDX-License-Identifier: Apache-2.0
#include "plugin/profiler/core/bandwidth.h"

#include <cstring>

namespace railscope::profiler {

Op op_from_name(const char* name) {
  if (name == nullptr) return Op::Unknown;
  // Dispatch on the first letters: cheap, and it runs on NCCL's enqueue path.
  switch (name[0]) {
    case 'A':
      if (std::strcmp(name, "AllReduce") == 0) return Op::AllReduce;
      if (std::strcmp(name, "AllGather") == 0) return Op::AllGather;
      if (std::strcmp(name, "AlltoAll") == 0 || std::strcmp(name, "AllToAll") == 0) return Op::AlltoAll;
      break;
    case 'R':
      if (std::strcmp(name, "ReduceScatter") == 0) return Op::ReduceScatter;
      if (std::strcmp(name, "Reduce") == 0) return Op::Reduce;
      if (std::strcmp(name, "Recv") == 0) return Op::Recv;
      break;
    case 'B':
      if (std::strcmp(name, "Broadcast") == 0) return Op::Broadcast;
      break;
    case 'S':
      if (std::strcmp(name, "Send") == 0) return Op::Send;
      if (std::strcmp(name, "SendRecv") == 0) return Op::SendRecv;
      if (std::strcmp(name, "Scatter") == 0) return Op::Scatter;
      break;
    case 'G':
      if (std::strcmp(name, "Gather") == 0) return Op::Gather;
      break;
    default: break;
  }
  return Op::Unknown;
}

Op op_from_nccl_func(int func) {
  switch (func) {
    case 0: return Op::Broadcast;
    case 1: return Op::Reduce;
    case 2: return Op::AllGather;
    case 3: return Op::ReduceScatter;
    case 4: return Op::AllReduce;
    case 5: return Op::SendRecv;
    case 6: return Op::Send;
    case 7: return Op::Recv;
    case 8: return Op::AlltoAll;
    case 9: return Op::Scatter;
    case 10: return Op::Gather;
    default: return Op::Unknown;
  }
}

std::string_view op_name(Op op) {
  switch (op) {
    case Op::Broadcast: return "Broadcast";
    case Op::Reduce: return "Reduce";
    case Op::AllGather: return "AllGather";
    case Op::ReduceScatter: return "ReduceScatter";
    case Op::AllReduce: return "AllReduce";
    case Op::SendRecv: return "SendRecv";
    case Op::Send: return "Send";
    case Op::Recv: return "Recv";
    case Op::AlltoAll: return "AlltoAll";
    case Op::Scatter: return "Scatter";
    case Op::Gather: return "Gather";
    case Op::Unknown: break;
  }
  return "Unknown";
}

const char* datatype_name_from_nccl(int dt) {
  static const char* const kNames[] = {"ncclInt8",    "ncclUint8",    "ncclInt32",      "ncclUint32",
                                       "ncclInt64",   "ncclUint64",   "ncclFloat16",    "ncclFloat32",
                                       "ncclFloat64", "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"};
  if (dt < 0 || dt >= static_cast<int>(sizeof(kNames) / sizeof(kNames[0]))) return "unknown";
  return kNames[dt];
}

const char* algo_name_from_nccl(int algo) {
  static const char* const kNames[] = {"TREE",      "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS",
                                       "NVLS_TREE", "PAT"};
  if (algo < 0 || algo >= static_cast<int>(sizeof(kNames) / sizeof(kNames[0]))) return "unknown";
  return kNames[algo];
}

const char* proto_name_from_nccl(int proto) {
  static const char* const kNames[] = {"LL", "LL128", "SIMPLE"};
  if (proto < 0 || proto >= static_cast<int>(sizeof(kNames) / sizeof(kNames[0]))) return "unknown";
  return kNames[proto];
}

size_t datatype_size(const char* name) {
  if (name == nullptr || std::strncmp(name, "ncclBfloat16", 12) == 0) return name ? 2 : 0;
  if (std::strncmp(name, "nccl", 4) != 0) return 0;
  const char* t = name + 4;
  if (std::strcmp(t, "Int8") == 0 || std::strcmp(t, "Uint8") == 0 || std::strcmp(t, "Char") == 0) return 1;
  if (std::strncmp(t, "Float8", 6) == 0) return 1;
  if (std::strcmp(t, "Float16") == 0 || std::strcmp(t, "Half") == 0) return 2;
  if (std::strcmp(t, "Int32") == 0 || std::strcmp(t, "Uint32") == 0 || std::strcmp(t, "Int") == 0 ||
      std::strcmp(t, "Float32") == 0 || std::strcmp(t, "Float") == 0)
    return 4;
  if (std::strcmp(t, "Int64") == 0 || std::strcmp(t, "Uint64") == 0 || std::strcmp(t, "Float64") == 0 ||
      std::strcmp(t, "Double") == 0)
    return 8;
  return 0;
}

static bool scales_with_ranks(Op op) {
  return op == Op::AllGather || op == Op::ReduceScatter || op == Op::AlltoAll || op == Op::Gather ||
         op == Op::Scatter;
}

uint64_t message_bytes(Op op, uint64_t count, size_t type_size, int nranks) {
  uint64_t bytes = count * type_size;
  if (scales_with_ranks(op) && nranks > 0) bytes *= static_cast<uint64_t>(nranks);
  return bytes;
}

std::optional<double> busbw_factor(Op op, int nranks) {
  if (nranks <= 0) return std::nullopt;
  const double n = nranks;
  switch (op) {
    case Op::AllReduce: return 2.0 * (n - 1.0) / n;
    case Op::AllGather:
    case Op::ReduceScatter:
    case Op::AlltoAll:
    case Op::Gather:
    case Op::Scatter: return (n - 1.0) / n;
    case Op::Broadcast:
    case Op::Reduce:
    case Op::Send:
    case Op::Recv:
    case Op::SendRecv: return 1.0;
    case Op::Unknown: break;
  }
  return std::nullopt;
}

std::optional<double> algbw_gbs(uint64_t bytes, double time_us) {
  if (!(time_us > 0.0)) return std::nullopt;
  return static_cast<double>(bytes) / (time_us * 1e3);  // bytes / ns == GB/s
}

}  // namespace railscope::profiler
