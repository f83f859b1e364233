// SPDX-License-Identifier: Apache-2.0
// What a net plugin hands to the profiler through NetPlugin events (the profiler callback NCCL gives a
// net plugin from net v10 on, common.h): the pluginId layout and the descriptors NCCL's own transports
// pass (src/include/plugin/profiler/net_ib_v1.h and net_socket_v1.h in NCCL's source), then railscope's
// own. Shared by net.h (the side that emits them) and profiler.h (the side that reads them), so a
// translation unit may include both.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// pluginId: low 16 bits = descriptor version, bits 16..31 = network type.
#define NCCL_PROFILER_NET_VER_MASK 0xFFFFU
#define NCCL_PROFILER_NET_TYPE_MASK 0xFFFF0000U
#define NCCL_PROFILER_NET_TYPE_IB (1U << 16)
#define NCCL_PROFILER_NET_TYPE_SOCK (2U << 16)

// NCCL's IB descriptor, version 1: one event per posted work request per QP. NCCL declares `qp` inside
// a one-member union; a plain member has the same layout.
#define NCCL_PROFILER_NET_IB_VER 1
enum { ncclProfileQp = 1 };
typedef struct {
  int device;
  uint64_t wr_id;
  int opcode;  // ibv_wr_opcode
  int qpNum;
  size_t length;
} ncclProfilerNetIbQp_v1_t;
typedef struct {
  uint8_t type;  // ncclProfileQp
  ncclProfilerNetIbQp_v1_t qp;
} ncclProfilerNetIbDescr_v1_t;

// NCCL's socket descriptor, version 1 (`sock` in a one-member union at NCCL, as above).
enum { ncclProfileSocket = 1 };
typedef struct {
  int fd;
  int op;
  size_t length;
} ncclProfilerNetSockOp_v1_t;
typedef struct {
  uint8_t type;  // ncclProfileSocket
  ncclProfilerNetSockOp_v1_t sock;
} ncclProfilerNetSockDescr_v1_t;

}  // extern "C"

// railscope's own NetPlugin descriptor (railscope's net plugin → railscope's profiler;
// docs/profiler.md "For net-plugin authors"). Network type 0x5253 ("RS") in pluginId bits 16..31,
// version 1; the first byte of the start data says which descriptor follows.
//  - ncclProfileQp: a request failed on this QP (RailscopeNetQp_v1). UpdateAndStop: the failure
//    (RailscopeNetCompletion_v1, valid for the duration of the call only); `diag_id` is a static string
//    from the diagnosis catalogue (e.g. "wc.retry_exceeded"), nullptr on success.
//  - kRailscopeNetPort: a port a connection of this communicator uses, once per port and connection,
//    started and stopped at once (RailscopeNetPort_v1, valid for the duration of the call only): what
//    the profiler's expected busbw counts, and whether NCCL must stage this port's traffic through host
//    memory because the port offers no GPU memory (the evidence behind coll.slow.gdr_off).
namespace railscope::nccl {
inline constexpr uint32_t kNetTypeRailscope = 0x5253U << 16;
inline constexpr uint32_t kNetRailscopeVersion = 1;
inline constexpr int64_t kNetRailscopePluginId = int64_t{kNetTypeRailscope | kNetRailscopeVersion};

struct RailscopeNetQp_v1 {
  uint8_t type;  // ncclProfileQp
  int device;
  int qpNum;
  int opcode;
  uint64_t wr_id;
  size_t length;
};

inline constexpr uint8_t kRailscopeNetPort = 2;
inline constexpr size_t kRailscopeNetPortNameLen = 32;

struct RailscopeNetPort_v1 {
  uint8_t type;        // kRailscopeNetPort
  uint8_t hostStaged;  // 1: the port offers NCCL no GPU memory (ptrSupport without CUDA and DMA-BUF)
  int port;            // port number on the device
  int speedMbps;       // line rate, Mb/s; 0 = unknown
  char device[kRailscopeNetPortNameLen];  // RDMA device name, NUL-terminated ("mlx5_0")
  const char* reason;  // hostStaged: catalogue id of why (static storage, "gdr.no_peermem"), else nullptr
};

struct RailscopeNetCompletion_v1 {
  int status;           // ibv_wc_status (0 = success)
  int vendorErr;        // ibv_wc.vendor_err
  size_t bytes;         // bytes completed
  const char* diag_id;  // catalogue id on error, nullptr otherwise (static storage)
  int peerRank;         // -1 when unknown
};
}  // namespace railscope::nccl

// Layouts (x86-64 / aarch64 LP64).
static_assert(sizeof(ncclProfilerNetIbDescr_v1_t) == 40);
static_assert(offsetof(ncclProfilerNetIbDescr_v1_t, qp) == 8);
static_assert(offsetof(ncclProfilerNetIbDescr_v1_t, qp.length) == 32);
static_assert(sizeof(ncclProfilerNetSockDescr_v1_t) == 24);
static_assert(offsetof(ncclProfilerNetSockDescr_v1_t, sock.length) == 16);
static_assert(sizeof(railscope::nccl::RailscopeNetQp_v1) == 32);
static_assert(sizeof(railscope::nccl::RailscopeNetCompletion_v1) == 32);
static_assert(sizeof(railscope::nccl::RailscopeNetPort_v1) == 56);
static_assert(offsetof(railscope::nccl::RailscopeNetPort_v1, device) == 12);
