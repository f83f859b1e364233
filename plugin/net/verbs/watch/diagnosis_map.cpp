// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/watch/diagnosis_map.h"

#include <fmt/format.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

#include "railscope/ibv/ibv.h"
#include "railscope/node/memlock.h"

namespace railscope::net::verbs {

std::string_view to_string(Phase p) {
  switch (p) {
    case Phase::Send: return "send (RDMA write with immediate)";
    case Phase::Recv: return "receive";
    case Phase::Cts: return "clear-to-send write";
    case Phase::Flush: return "flush";
  }
  return "?";
}

std::string_view wc_status_id(int status) {
  switch (status) {
    case IBV_WC_RETRY_EXC_ERR: return "wc.retry_exceeded";
    case IBV_WC_RNR_RETRY_EXC_ERR: return "wc.rnr_retry_exceeded";
    case IBV_WC_LOC_PROT_ERR: return "wc.local_protection";
    case IBV_WC_LOC_LEN_ERR: return "wc.local_length";
    case IBV_WC_REM_ACCESS_ERR: return "wc.remote_access";
    case IBV_WC_REM_INV_REQ_ERR: return "wc.remote_invalid";
    case IBV_WC_WR_FLUSH_ERR: return "wc.flushed";
    default: return "wc.error";
  }
}

diag::Finding wc_finding(int status, uint32_t vendor_err, Phase phase, size_t bytes,
                         const std::string& where) {
  auto f = diag::make(
      wc_status_id(status),
      fmt::format("{} completed with {}({}) vendor_err={} size={} on {}", to_string(phase),
                  ibv::wc_status_text(static_cast<ibv_wc_status>(status)), status, vendor_err, bytes, where));
  if (status == IBV_WC_RETRY_EXC_ERR)
    f.fix =
        "Check that the peer process is alive and the link is up on both ends, run `railscope doctor` on "
        "both "
        "nodes; on a congested fabric raise NCCL_IB_TIMEOUT";
  return f;
}

std::string_view modify_qp_id(int err, std::string_view state) {
  if (state == "RTR" || state == "RTS") {
    if (err == EINVAL) return "qp.rtr_einval";
    if (err == ENODATA) return "qp.rtr_enodata";
    if (err == ETIMEDOUT) return "qp.rtr_timeout";
  }
  return "qp.modify_failed";
}

diag::Finding post_finding(std::string_view call, int rc, const std::string& where) {
  return diag::make("wc.error",
                    fmt::format("{} failed with {} ({}) on {}", call, std::strerror(rc), rc, where));
}

diag::Finding modify_qp_finding(int err, std::string_view state, const std::string& where) {
  return diag::make(modify_qp_id(err, state), fmt::format("ibv_modify_qp to {} failed with {} ({}) on {}",
                                                          state, std::strerror(err), err, where));
}

std::string_view reg_mr_id(int err) {
  return err == ENOMEM || err == EPERM ? "memlock.too_low" : "reg.failed";
}

long long memlock_limit_kib() {
  const node::MemlockState m = node::read_memlock_limits();  // unreadable reads as unlimited
  return m.soft_bytes == node::kMemlockUnlimited ? -1 : static_cast<long long>(m.soft_bytes / 1024);
}

diag::Finding reg_mr_finding(int err, size_t size, long long memlock_kib, const std::string& where) {
  std::string limit = memlock_kib < 0 ? std::string("unlimited") : fmt::format("{} KiB", memlock_kib);
  if (reg_mr_id(err) == "memlock.too_low")
    return diag::make(
        "memlock.too_low",
        fmt::format("registering {} bytes ({} KiB) on {} failed with {} ({}); RLIMIT_MEMLOCK is {}", size,
                    (size + 1023) / 1024, where, std::strerror(err), err, limit));
  return diag::make("reg.failed",
                    fmt::format("registering {} bytes on {} failed with {} ({}); RLIMIT_MEMLOCK is {}", size,
                                where, std::strerror(err), err, limit));
}

}  // namespace railscope::net::verbs
