// SPDX-License-Identifier: Apache-2.0
// The conversion of a failed Status into NCCL's result code (transport.h): its finding's one line is
// logged once, where the failure leaves the plugin (the ABI edge, or a request's tester).
#include "plugin/net/transport.h"
#include "railscope/core/log.h"

namespace railscope::net {

ncclResult_t report_failure(const char* fn, const Status& status) {
  RS_WARN("NET/railscope {}: {}", fn, diag::one_line(status.finding()));
  return status.code;
}

}  // namespace railscope::net
