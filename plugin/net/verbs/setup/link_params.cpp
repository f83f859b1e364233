// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/setup/link_params.h"

#include <cmath>

#include "railscope/core/params.h"

namespace railscope::net::verbs {

LinkParams link_params_from_env(int comm_traffic_class) {
  LinkParams p;
  p.timeout = static_cast<int>(params::get_int("NCCL_IB_TIMEOUT"));
  p.retry_cnt = static_cast<int>(params::get_int("NCCL_IB_RETRY_CNT"));
  int tc = static_cast<int>(params::get_int("NCCL_IB_TC"));
  int sl = static_cast<int>(params::get_int("NCCL_IB_SL"));
  p.traffic_class = tc >= 0 ? tc : (comm_traffic_class >= 0 ? comm_traffic_class & 0xff : 0);
  p.service_level = sl >= 0 ? sl : (comm_traffic_class >= 0 ? comm_traffic_class & 0xf : 0);
  p.fifo_traffic_class = static_cast<int>(params::get_int("NCCL_IB_FIFO_TC"));
  p.qps_per_conn = static_cast<int>(params::get_int("NCCL_IB_QPS_PER_CONNECTION"));
  return p;
}

LinkParams link_params_unknown_comm() {
  LinkParams p = link_params_from_env(-1);
  p.qos_known = params::get_int("NCCL_IB_TC") >= 0 && params::get_int("NCCL_IB_SL") >= 0;
  return p;
}

std::chrono::microseconds retry_budget(int timeout, int retry_cnt) {
  using namespace std::chrono;
  if (timeout <= 0) return duration_cast<microseconds>(kInfiniteTimeoutBudget);
  if (timeout > 31) timeout = 31;
  if (retry_cnt < 0) retry_cnt = 0;
  double us = 4.096 * std::ldexp(1.0, timeout) * (retry_cnt + 1);
  auto budget = microseconds(static_cast<int64_t>(us));
  return budget < kMinStallBudget ? duration_cast<microseconds>(kMinStallBudget) : budget;
}

}  // namespace railscope::net::verbs
