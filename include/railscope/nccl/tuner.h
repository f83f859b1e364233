// SPDX-License-Identifier: Apache-2.0
// railscope's own declarations of NCCL's tuner plugin ABI, versions 2 to 6, written from the ABI facts
// in NCCL's src/include/plugin/tuner/tuner_v*.h (field order, types and sizes are fixed by NCCL; the sizes
// and offsets are checked at the end of this file). No NCCL header is included.
#pragma once

#include <cstddef>
#include <cstdint>

#include "railscope/nccl/common.h"

extern "C" {

// First index of the cost table: algorithms.
enum {
  NCCL_ALGO_UNDEF = -1,
  NCCL_ALGO_TREE = 0,
  NCCL_ALGO_RING = 1,
  NCCL_ALGO_COLLNET_DIRECT = 2,
  NCCL_ALGO_COLLNET_CHAIN = 3,
  NCCL_ALGO_NVLS = 4,
  NCCL_ALGO_NVLS_TREE = 5,
  NCCL_ALGO_PAT = 6,
};
// Second index of the cost table: protocols.
enum {
  NCCL_PROTO_UNDEF = -1,
  NCCL_PROTO_LL = 0,
  NCCL_PROTO_LL128 = 1,
  NCCL_PROTO_SIMPLE = 2,
};

#define RAILSCOPE_NCCL_NUM_ALGORITHMS 7
#define RAILSCOPE_NCCL_NUM_PROTOCOLS 3
#define RAILSCOPE_NCCL_NUM_HW_LINKS 3       // NVLINK=0, PCI=1, NET=2
#define RAILSCOPE_NCCL_NUM_COMPCAPS 4       // VOLTA=0, AMPERE=1, HOPPER=2, BLACKWELL=3
#define RAILSCOPE_NCCL_NUM_TUNING_SCALES 3  // 1 node=0, 2 nodes=1, 4+ nodes=2

// Marks an unsupported (algorithm, protocol) entry of the cost table. Never make it valid.
#define RAILSCOPE_NCCL_ALGO_PROTO_IGNORE (-1.0f)

enum { NCCL_HW_NVLINK = 0, NCCL_HW_PCI = 1, NCCL_HW_NET = 2 };

// --- v5 / v6 data ---------------------------------------------------------------------------------

// NVLink domains of the communicator (12 bytes).
typedef struct {
  int nNvlDomains;           // how many NVLink domains the ranks span
  int minRanksPerNvlDomain;  // fewest ranks in one domain
  int maxRanksPerNvlDomain;  // most ranks in one domain
} ncclNvlDomainInfo_v5_t;

// NCCL's model constants, filled with NCCL's defaults before init; in/out (1152 bytes, all double).
typedef struct {
  double baseLatencies[RAILSCOPE_NCCL_NUM_ALGORITHMS][RAILSCOPE_NCCL_NUM_PROTOCOLS];
  double hwLatencies[RAILSCOPE_NCCL_NUM_HW_LINKS][RAILSCOPE_NCCL_NUM_ALGORITHMS]
                    [RAILSCOPE_NCCL_NUM_PROTOCOLS];
  double llMaxBws[RAILSCOPE_NCCL_NUM_COMPCAPS][RAILSCOPE_NCCL_NUM_TUNING_SCALES];
  double perChMaxRingLL128Bws[RAILSCOPE_NCCL_NUM_COMPCAPS][RAILSCOPE_NCCL_NUM_TUNING_SCALES];
  double perChMaxTreeLL128Bws[RAILSCOPE_NCCL_NUM_COMPCAPS][RAILSCOPE_NCCL_NUM_TUNING_SCALES];
  double perChMaxTreeBws[RAILSCOPE_NCCL_NUM_COMPCAPS][RAILSCOPE_NCCL_NUM_TUNING_SCALES];
  double perChMaxNVLSTreeBws[RAILSCOPE_NCCL_NUM_COMPCAPS][RAILSCOPE_NCCL_NUM_TUNING_SCALES];
} ncclTunerConstants_v5_t;

typedef ncclNvlDomainInfo_v5_t ncclNvlDomainInfo_v6_t;
typedef ncclTunerConstants_v5_t ncclTunerConstants_v6_t;

// --- function tables, oldest first ----------------------------------------------------------------

// v2: returns a choice instead of editing a cost table.
typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int collNetSupport,
                              int nvlsSupport, int numPipeOps, int* algorithm, int* protocol, int* nChannels);
  ncclResult_t (*destroy)(void* context);
} ncclTuner_v2_t;

// v3: edits the cost table (a flat float[numAlgo][numProto] behind float**).
typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int* nChannels);
  ncclResult_t (*destroy)(void* context);
} ncclTuner_v3_t;

// v4: v3 plus the registered-buffer flag.
typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*destroy)(void* context);
} ncclTuner_v4_t;

// v5 (NCCL 2.28): context first, communicator id, NVLink domains and the in/out model constants.
typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, size_t nRanks, size_t nNodes,
                       ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t* nvlDomainInfo,
                       ncclTunerConstants_v5_t* constants);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*finalize)(void* context);
} ncclTuner_v5_t;

// v6 (NCCL 2.30): v5 plus an optional chunk-size override (in/out; NCCL clamps it).
typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, size_t nRanks, size_t nNodes,
                       ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v6_t* nvlDomainInfo,
                       ncclTunerConstants_v6_t* constants);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*finalize)(void* context);
  ncclResult_t (*getChunkSize)(void* context, ncclFunc_t collType, size_t nBytes, int algo, int proto,
                               int nChannels, size_t* chunkSize);
} ncclTuner_v6_t;

}  // extern "C"

// --- layout checks (x86-64 / aarch64 LP64) --------------------------------------------------------
static_assert(sizeof(ncclNvlDomainInfo_v5_t) == 12);
static_assert(sizeof(ncclTunerConstants_v5_t) == 1152);
static_assert(offsetof(ncclTunerConstants_v5_t, hwLatencies) == 21 * sizeof(double));
static_assert(offsetof(ncclTunerConstants_v5_t, llMaxBws) == 84 * sizeof(double));
static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxRingLL128Bws) == 96 * sizeof(double));
static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxTreeLL128Bws) == 108 * sizeof(double));
static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxTreeBws) == 120 * sizeof(double));
static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxNVLSTreeBws) == 132 * sizeof(double));
static_assert(sizeof(ncclTuner_v2_t) == 32 && sizeof(ncclTuner_v3_t) == 32 && sizeof(ncclTuner_v4_t) == 32);
static_assert(sizeof(ncclTuner_v5_t) == 32);
static_assert(sizeof(ncclTuner_v6_t) == 40);
static_assert(offsetof(ncclTuner_v5_t, getCollInfo) == 16 && offsetof(ncclTuner_v5_t, finalize) == 24);
static_assert(offsetof(ncclTuner_v6_t, getChunkSize) == 32);
