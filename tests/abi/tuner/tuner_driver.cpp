// SPDX-License-Identifier: Apache-2.0
#include "tuner_driver.h"

namespace railscope::abi_test {

CostTable::CostTable() {
  for (auto& row : t)
    for (float& v : row) v = RAILSCOPE_NCCL_ALGO_PROTO_IGNORE;
  for (int p = 0; p < 3; ++p) {
    t[NCCL_ALGO_TREE][p] = 100.0f + static_cast<float>(p);
    t[NCCL_ALGO_RING][p] = 200.0f + static_cast<float>(p);
  }
}

int CostTable::zeroed_count() const {
  int n = 0;
  for (const auto& row : t)
    for (float v : row) n += v == 0.0f;
  return n;
}

TunerDriver::TunerDriver(int version)
    : version_(version),
      plugin_(load(PluginKind::Tuner, built_plugin_path(PluginKind::Tuner), NcclRelease::V2_30, version)) {}

TunerDriver::~TunerDriver() {
  if (inited_) finalize();
}

const char* TunerDriver::name() const { return *static_cast<const char* const*>(plugin_.table); }

ncclResult_t TunerDriver::init(size_t n_ranks, size_t n_nodes, ncclNvlDomainInfo_v5_t* nvl,
                               ncclTunerConstants_v5_t* constants) {
  ncclResult_t r = ncclInternalError;
  switch (version_) {
    case 2:
      r = static_cast<ncclTuner_v2_t*>(plugin_.table)->init(n_ranks, n_nodes, CapturedLog::logger, &ctx_);
      break;
    case 3:
      r = static_cast<ncclTuner_v3_t*>(plugin_.table)->init(n_ranks, n_nodes, CapturedLog::logger, &ctx_);
      break;
    case 4:
      r = static_cast<ncclTuner_v4_t*>(plugin_.table)->init(n_ranks, n_nodes, CapturedLog::logger, &ctx_);
      break;
    case 5:
      r = static_cast<ncclTuner_v5_t*>(plugin_.table)
              ->init(&ctx_, 0x1234, n_ranks, n_nodes, CapturedLog::logger, nvl, constants);
      break;
    case 6:
      r = static_cast<ncclTuner_v6_t*>(plugin_.table)
              ->init(&ctx_, 0x1234, n_ranks, n_nodes, CapturedLog::logger, nvl, constants);
      break;
  }
  inited_ = r == ncclSuccess;
  return r;
}

ncclResult_t TunerDriver::coll_info(ncclFunc_t coll, size_t bytes, int pipe_ops, CostTable& table,
                                    int reg_buff, int* n_channels) {
  if (version_ == 2) {
    // NCCL's v2 adapter: support flags from the table, then mark the returned choice.
    const int nvls = (table.t[NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE] != RAILSCOPE_NCCL_ALGO_PROTO_IGNORE ||
                      table.t[NCCL_ALGO_NVLS_TREE][NCCL_PROTO_SIMPLE] != RAILSCOPE_NCCL_ALGO_PROTO_IGNORE);
    const int collnet =
        table.t[NCCL_ALGO_COLLNET_CHAIN][NCCL_PROTO_SIMPLE] != RAILSCOPE_NCCL_ALGO_PROTO_IGNORE;
    int algo = NCCL_ALGO_UNDEF, proto = NCCL_PROTO_UNDEF;
    const ncclResult_t r = choose(coll, bytes, collnet, nvls, pipe_ops, &algo, &proto, n_channels);
    if (algo >= 0 && algo < 7 && proto >= 0 && proto < 3 &&
        table.t[algo][proto] != RAILSCOPE_NCCL_ALGO_PROTO_IGNORE)
      table.t[algo][proto] = 0.0f;
    return r;
  }
  float** t = table.as_nccl_passes_it();
  switch (version_) {
    case 3:
      return static_cast<ncclTuner_v3_t*>(plugin_.table)
          ->getCollInfo(ctx_, coll, bytes, pipe_ops, t, 7, 3, n_channels);
    case 4:
      return static_cast<ncclTuner_v4_t*>(plugin_.table)
          ->getCollInfo(ctx_, coll, bytes, pipe_ops, t, 7, 3, reg_buff, n_channels);
    case 5:
      return static_cast<ncclTuner_v5_t*>(plugin_.table)
          ->getCollInfo(ctx_, coll, bytes, pipe_ops, t, 7, 3, reg_buff, n_channels);
    case 6:
      return static_cast<ncclTuner_v6_t*>(plugin_.table)
          ->getCollInfo(ctx_, coll, bytes, pipe_ops, t, 7, 3, reg_buff, n_channels);
  }
  return ncclInternalError;
}

ncclResult_t TunerDriver::coll_info_raw(ncclFunc_t coll, size_t bytes, float** table, int num_algo,
                                        int num_proto, int* n_channels) {
  switch (version_) {
    case 3:
      return static_cast<ncclTuner_v3_t*>(plugin_.table)
          ->getCollInfo(ctx_, coll, bytes, 1, table, num_algo, num_proto, n_channels);
    case 4:
      return static_cast<ncclTuner_v4_t*>(plugin_.table)
          ->getCollInfo(ctx_, coll, bytes, 1, table, num_algo, num_proto, 0, n_channels);
    case 5:
      return static_cast<ncclTuner_v5_t*>(plugin_.table)
          ->getCollInfo(ctx_, coll, bytes, 1, table, num_algo, num_proto, 0, n_channels);
    case 6:
      return static_cast<ncclTuner_v6_t*>(plugin_.table)
          ->getCollInfo(ctx_, coll, bytes, 1, table, num_algo, num_proto, 0, n_channels);
  }
  return ncclInternalError;
}

ncclResult_t TunerDriver::choose(ncclFunc_t coll, size_t bytes, int collnet, int nvls, int pipe_ops,
                                 int* algo, int* proto, int* n_channels) {
  return static_cast<ncclTuner_v2_t*>(plugin_.table)
      ->getCollInfo(ctx_, coll, bytes, collnet, nvls, pipe_ops, algo, proto, n_channels);
}

ncclResult_t TunerDriver::finalize() {
  inited_ = false;
  // v2-v4 call it destroy, v5/v6 finalize: the same slot (after getCollInfo).
  switch (version_) {
    case 2: return static_cast<ncclTuner_v2_t*>(plugin_.table)->destroy(ctx_);
    case 3: return static_cast<ncclTuner_v3_t*>(plugin_.table)->destroy(ctx_);
    case 4: return static_cast<ncclTuner_v4_t*>(plugin_.table)->destroy(ctx_);
    case 5: return static_cast<ncclTuner_v5_t*>(plugin_.table)->finalize(ctx_);
    default: return static_cast<ncclTuner_v6_t*>(plugin_.table)->finalize(ctx_);
  }
}

}  // namespace railscope::abi_test
