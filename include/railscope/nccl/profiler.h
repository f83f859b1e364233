// SPDX-License-Identifier: Apache-2.0
// railscope's own declarations of NCCL's profiler plugin ABI, versions 1 to 6, and of the
// descriptors a net plugin hands to the profiler through NetPlugin events. Restated from the ABI
// facts in NCCL's versioned profiler headers, src/include/plugin/profiler/profiler_v*.h (2.28.9 for
// v1..v5, 2.30 for v6). Field order, types and sizes are fixed by NCCL; the static_asserts at the
// end pin the sizes and offsets we depend on (x86-64 / aarch64 LP64).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "railscope/nccl/common.h"
#include "railscope/nccl/net_descriptors.h"  // the `data` of a NetPlugin event

extern "C" {

// Event type bits (one per descriptor; also the bits of the activation mask).
enum {
  ncclProfileGroup = 1 << 0,
  ncclProfileColl = 1 << 1,
  ncclProfileP2p = 1 << 2,
  ncclProfileProxyOp = 1 << 3,
  ncclProfileProxyStep = 1 << 4,
  ncclProfileProxyCtrl = 1 << 5,
  ncclProfileKernelCh = 1 << 6,
  ncclProfileNetPlugin = 1 << 7,
  ncclProfileGroupApi = 1 << 8,       // v5+
  ncclProfileCollApi = 1 << 9,        // v5+
  ncclProfileP2pApi = 1 << 10,        // v5+
  ncclProfileKernelLaunch = 1 << 11,  // v5+
  ncclProfileCeColl = 1 << 12,        // v6 (copy-engine collectives)
  ncclProfileCeSync = 1 << 13,        // v6
  ncclProfileCeBatch = 1 << 14,       // v6
};

// Event states, one enum for every version (values never reused).
typedef enum {
  ncclProfilerProxyOpSendPosted = 0,  // ProxyOp states: deprecated since v4
  ncclProfilerProxyOpSendRemFifoWait = 1,
  ncclProfilerProxyOpSendTransmitted = 2,
  ncclProfilerProxyOpSendDone = 3,
  ncclProfilerProxyOpRecvPosted = 4,
  ncclProfilerProxyOpRecvReceived = 5,
  ncclProfilerProxyOpRecvTransmitted = 6,
  ncclProfilerProxyOpRecvDone = 7,
  ncclProfilerProxyStepSendGPUWait = 8,  // kernel has not filled the staging slot yet
  ncclProfilerProxyStepSendWait = 9,     // isend posted, completion pending
  ncclProfilerProxyStepRecvWait = 10,    // irecv posted, data pending
  ncclProfilerProxyStepRecvFlushWait = 11,
  ncclProfilerProxyStepRecvGPUWait = 12,  // kernel has not consumed the data yet
  ncclProfilerProxyCtrlIdle = 13,
  ncclProfilerProxyCtrlActive = 14,
  ncclProfilerProxyCtrlSleep = 15,
  ncclProfilerProxyCtrlWakeup = 16,
  ncclProfilerProxyCtrlAppend = 17,
  ncclProfilerProxyCtrlAppendEnd = 18,
  ncclProfilerProxyOpInProgress_v4 = 19,
  ncclProfilerProxyStepSendPeerWait_v4 = 20,  // data ready, receiver's clear-to-send not seen yet
  ncclProfilerNetPluginUpdate = 21,
  ncclProfilerKernelChStop = 22,
  ncclProfilerGroupStartApiStop = 23,
  ncclProfilerGroupEndApiStart = 24,
  ncclProfilerCeCollStart = 25,  // v6
  ncclProfilerCeCollComplete = 26,
  ncclProfilerCeSyncStart = 27,
  ncclProfilerCeSyncComplete = 28,
  ncclProfilerCeBatchStart = 29,
  ncclProfilerCeBatchComplete = 30,
} ncclProfilerEventState_t;

// ---- descriptor parts that are identical in several versions --------------------------------

struct ncclProfilerProxyOpDescr {  // v1..v6
  pid_t pid;                       // process that owns the proxy op (differs from ours with PXN)
  uint8_t channelId;
  int peer;
  int nSteps;
  int chunkSize;
  int isSend;
};
struct ncclProfilerProxyStepDescr {
  int step;
};
struct ncclProfilerNetPluginDescr {  // v3+
  int64_t id;                        // low 16 bits: descriptor version; next 16: network type
  void* data;                        // the net plugin's own descriptor
};

// ---- v1 (NCCL 2.23): numeric func/datatype/algo/proto --------------------------------------

typedef struct {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      const char* name;
      uint64_t commHash;
      uint64_t seqNumber;
      uint8_t func;  // ncclFunc_t value
      const void* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      uint8_t datatype;  // ncclDataType_t value
      uint32_t op;
      size_t trafficBytes;
      uint8_t nMaxChannels;
      uint8_t nWarps;
      uint8_t algo;   // NCCL_ALGO_* value
      uint8_t proto;  // NCCL_PROTO_* value
      int isCollnet;
      int isNvls;
    } coll;
    struct {
      const char* name;
      uint64_t commHash;
      uint8_t func;
      void* buff;
      uint8_t datatype;
      size_t count;
      int peer;
    } p2p;
    ncclProfilerProxyOpDescr proxyOp;
    ncclProfilerProxyStepDescr proxyStep;
  };
} ncclProfilerEventDescr_v1_t;

// v1..v3 state arguments.
typedef union {
  struct {
    size_t transSize;
    int steps;
  } proxyOp;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
} ncclProfilerEventStateArgs_v1_t;
typedef ncclProfilerEventStateArgs_v1_t ncclProfilerEventStateArgs_v2_t;
typedef ncclProfilerEventStateArgs_v1_t ncclProfilerEventStateArgs_v3_t;

// ---- v2 (2.24): names as strings; v3 (2.25): trafficBytes gone, KernelCh and NetPlugin added --

typedef struct {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      const char* name;
      uint64_t commHash;
      uint64_t seqNumber;
      const char* func;
      const void* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      size_t trafficBytes;
      uint8_t nMaxChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    struct {
      const char* name;
      uint64_t commHash;
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
    } p2p;
    ncclProfilerProxyOpDescr proxyOp;
    ncclProfilerProxyStepDescr proxyStep;
  };
} ncclProfilerEventDescr_v2_t;

typedef struct {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      const char* name;
      uint64_t commHash;
      uint64_t seqNumber;
      const char* func;
      const void* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nMaxChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    struct {
      const char* name;
      uint64_t commHash;
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
    } p2p;
    ncclProfilerProxyOpDescr proxyOp;
    ncclProfilerProxyStepDescr proxyStep;
    struct {
      uint8_t channelId;
    } kernelCh;
    ncclProfilerNetPluginDescr netPlugin;
  };
} ncclProfilerEventDescr_v3_t;

// ---- v4 (2.26): comm identity moved to init; KernelCh carries the GPU start timer ------------

struct ncclProfilerKernelChDescr {  // v4+
  uint8_t channelId;
  uint64_t pTimer;  // GPU globaltimer (ns) when the channel started
};

typedef struct {
  uint8_t type;
  void* parentObj;  // for Coll/P2p: the (legacy) Group event
  int rank;
  union {
    struct {
      uint64_t seqNumber;
      const char* func;
      const void* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
    } p2p;
    ncclProfilerProxyOpDescr proxyOp;
    ncclProfilerProxyStepDescr proxyStep;
    ncclProfilerKernelChDescr kernelCh;
    ncclProfilerNetPluginDescr netPlugin;
  };
} ncclProfilerEventDescr_v4_t;

// v4+ state arguments (v5 and v6 use the same union).
typedef union {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;  // GPU globaltimer (ns) when the channel stopped
  } kernelCh;
} ncclProfilerEventStateArgs_v4_t;
typedef ncclProfilerEventStateArgs_v4_t ncclProfilerEventStateArgs_v5_t;
typedef ncclProfilerEventStateArgs_v4_t ncclProfilerEventStateArgs_v6_t;

// ---- v5 (2.28): 64-bit type, API-level events; Coll's parent is its CollApi event -------------

#define RAILSCOPE_PROFILER_V5_UNION_MEMBERS \
  struct {                                  \
    bool graphCaptured;                     \
    int groupDepth;                         \
  } groupApi;                               \
  struct {                                  \
    const char* func;                       \
    size_t count;                           \
    const char* datatype;                   \
    int root;                               \
    void* stream;                           \
    bool graphCaptured;                     \
  } collApi;                                \
  struct {                                  \
    const char* func;                       \
    size_t count;                           \
    const char* datatype;                   \
    void* stream;                           \
    bool graphCaptured;                     \
  } p2pApi;                                 \
  struct {                                  \
    void* stream;                           \
  } kernelLaunch;                           \
  struct {                                  \
    uint64_t seqNumber;                     \
    const char* func;                       \
    const void* sendBuff;                   \
    void* recvBuff;                         \
    size_t count;                           \
    int root;                               \
    const char* datatype;                   \
    uint8_t nChannels;                      \
    uint8_t nWarps;                         \
    const char* algo;                       \
    const char* proto;                      \
    void* parentGroup;                      \
  } coll;                                   \
  struct {                                  \
    const char* func;                       \
    void* buff;                             \
    const char* datatype;                   \
    size_t count;                           \
    int peer;                               \
    uint8_t nChannels;                      \
    void* parentGroup;                      \
  } p2p;                                    \
  ncclProfilerProxyOpDescr proxyOp;         \
  ncclProfilerProxyStepDescr proxyStep;     \
  ncclProfilerKernelChDescr kernelCh;       \
  ncclProfilerNetPluginDescr netPlugin;

typedef struct {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    RAILSCOPE_PROFILER_V5_UNION_MEMBERS
  };
} ncclProfilerEventDescr_v5_t;

// ---- v6 (2.30): v5 plus copy-engine collective events ----------------------------------------

typedef struct {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    RAILSCOPE_PROFILER_V5_UNION_MEMBERS
    struct {
      uint64_t seqNumber;
      const char* func;
      const void* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      const char* syncStrategy;
      bool intraBatchSync;
      uint32_t batchSize;
      uint32_t numBatches;
      uint32_t ceSeqNum;
      void* stream;
    } ceColl;
    struct {
      bool isComplete;
      int nRanks;
    } ceCollSync;
    struct {
      int numOps;
      size_t totalBytes;
      bool useIntraSync;
    } ceCollBatch;
  };
} ncclProfilerEventDescr_v6_t;

#undef RAILSCOPE_PROFILER_V5_UNION_MEMBERS

// ---- function tables ------------------------------------------------------------------------

#define RAILSCOPE_PROFILER_TABLE(N, INIT_ARGS)                                                          \
  typedef struct {                                                                                      \
    const char* name;                                                                                   \
    ncclResult_t(*init) INIT_ARGS;                                                                      \
    ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_v##N##_t* eDescr); \
    ncclResult_t (*stopEvent)(void* eHandle);                                                           \
    ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_t eState,                    \
                                     ncclProfilerEventStateArgs_v##N##_t* eStateArgs);                  \
    ncclResult_t (*finalize)(void* context);                                                            \
  } ncclProfiler_v##N##_t;

RAILSCOPE_PROFILER_TABLE(1, (void** context, int* eActivationMask))
RAILSCOPE_PROFILER_TABLE(2, (void** context, int* eActivationMask))
RAILSCOPE_PROFILER_TABLE(3, (void** context, int* eActivationMask))
// v4: note the argument order differs from v5 (commName before commHash).
RAILSCOPE_PROFILER_TABLE(4, (void** context, int* eActivationMask, const char* commName, uint64_t commHash,
                             int nNodes, int nRanks, int rank, ncclDebugLogger_t logFn))
RAILSCOPE_PROFILER_TABLE(5, (void** context, uint64_t commId, int* eActivationMask, const char* commName,
                             int nNodes, int nRanks, int rank, ncclDebugLogger_t logFn))
RAILSCOPE_PROFILER_TABLE(6, (void** context, uint64_t commId, int* eActivationMask, const char* commName,
                             int nNodes, int nRanks, int rank, ncclDebugLogger_t logFn))
#undef RAILSCOPE_PROFILER_TABLE

}  // extern "C"

// ---- layout checks (sizes and offsets the ABI depends on) --------------------------------------
static_assert(sizeof(ncclProfilerEventState_t) == 4);
static_assert(sizeof(ncclProfilerProxyOpDescr) == 24);
static_assert(offsetof(ncclProfilerEventDescr_v1_t, parentObj) == 8);
static_assert(offsetof(ncclProfilerEventDescr_v1_t, rank) == 16);
static_assert(offsetof(ncclProfilerEventDescr_v1_t, coll) == 24);
static_assert(offsetof(ncclProfilerEventDescr_v1_t, coll.trafficBytes) == 24 + 72);
static_assert(offsetof(ncclProfilerEventDescr_v2_t, coll.trafficBytes) == 24 + 72);
static_assert(offsetof(ncclProfilerEventDescr_v3_t, coll.nMaxChannels) == 24 + 72);
static_assert(offsetof(ncclProfilerEventDescr_v3_t, netPlugin.data) == 24 + 8);
static_assert(offsetof(ncclProfilerEventDescr_v4_t, coll.proto) == 24 + 72);
static_assert(offsetof(ncclProfilerEventDescr_v4_t, kernelCh.pTimer) == 24 + 8);
static_assert(sizeof(ncclProfilerEventDescr_v5_t) == 112);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll) == 24);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.count) == 24 + 32);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.datatype) == 24 + 48);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.nChannels) == 24 + 56);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.algo) == 24 + 64);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.parentGroup) == 24 + 80);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, collApi.graphCaptured) == 24 + 40);
static_assert(sizeof(ncclProfilerEventDescr_v6_t) == 112);
static_assert(offsetof(ncclProfilerEventDescr_v6_t, coll.proto) ==
              offsetof(ncclProfilerEventDescr_v5_t, coll.proto));
static_assert(sizeof(ncclProfilerEventStateArgs_v5_t) == 8);
static_assert(sizeof(ncclProfilerEventStateArgs_v1_t) == 16);
static_assert(sizeof(ncclProfiler_v5_t) == 48);
static_assert(sizeof(ncclProfiler_v1_t) == 48);
