// The QP tuning NCCL's IB transport takes from the environment (NCCL_IB_TIMEOUT, NCCL_IB_RETRY_CNT,
// NCCL_IB_TC, NCCL_IB_SL, NCCL_IB_QPS_PER_CONNECTION), with NCCL's meanings and defaults, and the
// retry budget derived from them: how long the hardware keeps retrying before it gives up, which is
// also how long railscope lets posted work go without progress before calling it stalled.
#pragma once

#include <chrono>
#include <cstdint>

namespace railscope::net::verbs {

struct LinkParams {
  int timeout = 20;       // IB local ACK timeout exponent: 4.096 µs × 2^timeout per try
  int retry_cnt = 7;      // transport retries (rxe treats 7 as infinite)
  int traffic_class = 0;  // RoCE GRH traffic class
  int service_level = 0;
  int qps_per_conn = 1;
};

// Reads the variables through the params registry. comm_traffic_class (the communicator's
// trafficClass, -1 = undefined) applies to TC and SL when NCCL_IB_TC/NCCL_IB_SL are unset, as NCCL does.
LinkParams link_params_from_env(int comm_traffic_class);

// Retry budget = 4.096 µs × 2^timeout × (retry_cnt + 1), never below kMinStallBudget; timeout 0
// (infinite in the IB spec) gets kInfiniteTimeoutBudget.
inline constexpr std::chrono::milliseconds kMinStallBudget{2000};
inline constexpr std::chrono::milliseconds kInfiniteTimeoutBudget{60000};
std::chrono::microseconds retry_budget(int timeout, int retry_cnt);

}  // namespace railscope::net::verbs
