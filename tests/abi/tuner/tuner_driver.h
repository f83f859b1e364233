// SPDX-License-Identifier: Apache-2.0
// Drives one exported tuner version the way NCCL does: init with the version's signature, then
// getCollInfo on a flat float[7][3] table. For v2 the driver plays NCCL's v2 adapter: it derives
// collNetSupport/nvlsSupport from the table and zeroes the returned choice unless it is IGNORE.
#pragma once

#include <string>

#include "abi/plugin_loader.h"
#include "railscope/nccl/tuner.h"

namespace railscope::abi_test {

inline const std::string kFixtures = RAILSCOPE_TUNER_FIXTURES;

struct CostTable {
  float t[7][3];
  CostTable();  // NCCL's usual multi-node table: Tree and Ring with every protocol, the rest IGNORE
  float** as_nccl_passes_it() { return reinterpret_cast<float**>(&t[0][0]); }
  int zeroed_count() const;
};

class TunerDriver {
 public:
  explicit TunerDriver(int version);
  ~TunerDriver();
  TunerDriver(const TunerDriver&) = delete;
  TunerDriver& operator=(const TunerDriver&) = delete;

  bool loaded() const { return static_cast<bool>(plugin_); }
  const LoadedPlugin& plugin() const { return plugin_; }
  int version() const { return version_; }
  const char* name() const;

  ncclResult_t init(size_t n_ranks, size_t n_nodes, ncclNvlDomainInfo_v5_t* nvl = nullptr,
                    ncclTunerConstants_v5_t* constants = nullptr);
  // v2-v6; for v2 as NCCL's adapter would. v3 drops reg_buff.
  ncclResult_t coll_info(ncclFunc_t coll, size_t bytes, int pipe_ops, CostTable& table, int reg_buff,
                         int* n_channels);
  // v3-v6 only: raw call with any numAlgo/numProto.
  ncclResult_t coll_info_raw(ncclFunc_t coll, size_t bytes, float** table, int num_algo, int num_proto,
                             int* n_channels);
  // v2 only: the raw choice.
  ncclResult_t choose(ncclFunc_t coll, size_t bytes, int collnet, int nvls, int pipe_ops, int* algo,
                      int* proto, int* n_channels);
  ncclTuner_v6_t* v6() const { return static_cast<ncclTuner_v6_t*>(plugin_.table); }
  ncclResult_t finalize();
  void* context() const { return ctx_; }

 private:
  int version_;
  LoadedPlugin plugin_;
  void* ctx_ = nullptr;
  bool inited_ = false;
};

}  // namespace railscope::abi_test
