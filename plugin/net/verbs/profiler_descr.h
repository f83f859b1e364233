// railscope's own NetPlugin descriptor as the verbs engine hands it to NCCL's profiler callback
// (docs/profiler.md "For net-plugin authors"): pluginId 0x5253 << 16 | 1; start data: the QP (its
// device, number, opcode, length); UpdateAndStop data: the completion (status, vendor error, bytes,
// the diagnosis id). The railscope profiler turns a non-zero status into a `diag` record. Declared
// here because include/railscope/nccl/profiler.h (the profiler's side) cannot share a translation unit
// with net.h (both declare NCCL's profiler ids); tests/unit/net_fabric/profiler_descr_test.cpp checks
// the layouts against profiler.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace railscope::net::verbs {

inline constexpr int64_t kProfilerRailscopePluginId = (int64_t{0x5253} << 16) | 1;

struct RailscopeQpDescr {
  uint8_t type;  // ncclProfileQp (1)
  int device;
  int qpNum;
  int opcode;
  uint64_t wr_id;
  size_t length;
};

struct RailscopeCompletion {
  int status;           // ibv_wc_status (0 = success)
  int vendorErr;        // ibv_wc.vendor_err
  size_t bytes;         // bytes completed
  const char* diag_id;  // catalogue id (static storage), nullptr on success
  int peerRank;         // -1: unknown
};

}  // namespace railscope::net::verbs
