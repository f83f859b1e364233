// SPDX-License-Identifier: Apache-2.0
// The QP tuning NCCL's IB transport takes from the environment (NCCL_IB_TIMEOUT, NCCL_IB_RETRY_CNT,
// NCCL_IB_TC, NCCL_IB_SL, NCCL_IB_FIFO_TC, NCCL_IB_QPS_PER_CONNECTION), with NCCL's meanings and defaults,
// and the retry budget derived from them: how long the hardware keeps retrying before it gives up, which is
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
  int fifo_traffic_class = -1;  // NCCL_IB_FIFO_TC: the receiver's QPs on RoCE; -1 = the sender's class
  int qps_per_conn = 1;
  // Whether traffic_class and service_level are this end's own setting. False at a listener whose
  // communicator's class is not known (NCCL v10 gives it to connect only) unless NCCL_IB_TC and
  // NCCL_IB_SL say it: such an end takes the sender's values without judging them (qos_agreement.h).
  bool qos_known = true;
};

// Reads the variables through the params registry. comm_traffic_class (the communicator's
// trafficClass, -1 = undefined) applies to TC and SL when NCCL_IB_TC/NCCL_IB_SL are unset, as NCCL does.
LinkParams link_params_from_env(int comm_traffic_class);
// The same for a listener that does not know its communicator's class (qos_known as above).
LinkParams link_params_unknown_comm();

// Retry budget = 4.096 µs × 2^timeout × (retry_cnt + 1), never below kMinStallBudget; timeout 0
// (infinite in the IB spec) gets kInfiniteTimeoutBudget.
inline constexpr std::chrono::milliseconds kMinStallBudget{2000};
inline constexpr std::chrono::milliseconds kInfiniteTimeoutBudget{60000};
std::chrono::microseconds retry_budget(int timeout, int retry_cnt);

}  // namespace railscope::net::verbs
