// SPDX-License-Identifier: Apache-2.0
// Failure → diagnosis mapping: completion statuses, modify_qp errnos, registration errnos. Every id
// the verbs engine can produce exists in the catalogue.
#include "plugin/net/verbs/watch/diagnosis_map.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <cerrno>

namespace railscope::net::verbs {
namespace {

TEST(NetDiagnosisMap, CompletionStatuses) {
  EXPECT_EQ(wc_status_id(IBV_WC_RETRY_EXC_ERR), "wc.retry_exceeded");
  EXPECT_EQ(wc_status_id(IBV_WC_RNR_RETRY_EXC_ERR), "wc.rnr_retry_exceeded");
  EXPECT_EQ(wc_status_id(IBV_WC_LOC_PROT_ERR), "wc.local_protection");
  EXPECT_EQ(wc_status_id(IBV_WC_LOC_LEN_ERR), "wc.local_length");
  EXPECT_EQ(wc_status_id(IBV_WC_REM_ACCESS_ERR), "wc.remote_access");
  EXPECT_EQ(wc_status_id(IBV_WC_REM_INV_REQ_ERR), "wc.remote_invalid");
  EXPECT_EQ(wc_status_id(IBV_WC_WR_FLUSH_ERR), "wc.flushed");
  EXPECT_EQ(wc_status_id(IBV_WC_FATAL_ERR), "wc.error");
  for (int s = IBV_WC_SUCCESS + 1; s <= IBV_WC_TM_RNDV_INCOMPLETE; ++s)
    EXPECT_NE(diag::find(wc_status_id(s)), nullptr) << s;
}

TEST(NetDiagnosisMap, CompletionFindingCarriesStatusVendorErrPhaseAndPlace) {
  auto f = wc_finding(IBV_WC_RETRY_EXC_ERR, 0x81, Phase::Send, 4096, "host-a rxe0 -> host-b rxe1");
  std::string line = diag::one_line(f);
  EXPECT_EQ(f.id(), "wc.retry_exceeded");
  EXPECT_NE(line.find("(12)"), std::string::npos) << line;
  EXPECT_NE(line.find("vendor_err=129"), std::string::npos) << line;
  EXPECT_NE(line.find("send"), std::string::npos) << line;
  EXPECT_NE(line.find("host-b rxe1"), std::string::npos) << line;
  EXPECT_NE(line.find("Fix:"), std::string::npos) << line;
}

TEST(NetDiagnosisMap, ModifyQpErrnos) {
  EXPECT_EQ(modify_qp_id(EINVAL, "RTR"), "qp.rtr_einval");
  EXPECT_EQ(modify_qp_id(ENODATA, "RTR"), "qp.rtr_enodata");
  EXPECT_EQ(modify_qp_id(ETIMEDOUT, "RTR"), "qp.rtr_timeout");
  EXPECT_EQ(modify_qp_id(EINVAL, "RTS"), "qp.rtr_einval");
  EXPECT_EQ(modify_qp_id(EINVAL, "INIT"), "qp.modify_failed");
  EXPECT_EQ(modify_qp_id(EPERM, "RTR"), "qp.modify_failed");
  auto f = modify_qp_finding(EINVAL, "RTR", "rxe0:1 GID[0] fe80::1 -> rxe1:1 GID[1] ::ffff:10.0.0.2");
  EXPECT_NE(diag::one_line(f).find("Invalid argument (22)"), std::string::npos);
  EXPECT_NE(diag::one_line(f).find("GID[0] fe80::1"), std::string::npos);
}

TEST(NetDiagnosisMap, PostFailureNamesTheCallTheErrnoAndWhere) {
  auto f = post_finding("ibv_post_send (eager)", ENOMEM, "rxe0:1 -> vm rxe1:1");
  EXPECT_EQ(f.id(), "wc.error");
  EXPECT_NE(diag::one_line(f).find(
                "ibv_post_send (eager) failed with Cannot allocate memory (12) on rxe0:1 -> vm rxe1:1"),
            std::string::npos);
}

TEST(NetDiagnosisMap, RegistrationPrintsLimitAndSize) {
  EXPECT_EQ(reg_mr_id(ENOMEM), "memlock.too_low");
  EXPECT_EQ(reg_mr_id(EPERM), "memlock.too_low");
  EXPECT_EQ(reg_mr_id(EFAULT), "reg.failed");
  auto f = reg_mr_finding(ENOMEM, 1 << 20, 64, "rxe0:1");
  std::string line = diag::one_line(f);
  EXPECT_EQ(f.id(), "memlock.too_low");
  EXPECT_NE(line.find("1048576 bytes"), std::string::npos) << line;
  EXPECT_NE(line.find("RLIMIT_MEMLOCK is 64 KiB"), std::string::npos) << line;
  EXPECT_NE(line.find("ulimit -l unlimited"), std::string::npos) << line;
  EXPECT_NE(diag::one_line(reg_mr_finding(ENOMEM, 4096, -1, "x")).find("unlimited"), std::string::npos);
}

TEST(NetDiagnosisMap, EveryIdTheEngineUsesIsCatalogued) {
  for (const char* id :
       {"device.none",          "device.filtered_out", "port.down",          "gid.none_usable",
        "gid.index_invalid",    "gid.link_local",      "gid.mismatch",       "link.layer_mismatch",
        "mtu.mismatch",         "memlock.too_low",     "reg.failed",         "qp.rtr_einval",
        "qp.rtr_enodata",       "qp.rtr_timeout",      "qp.modify_failed",   "qp.create_failed",
        "progress.stalled",     "peer.closed",         "peer.bad_handshake", "async.port_error",
        "async.device_fatal",   "async.gid_change",    "async.qp_fatal",     "gdr.dmabuf_unsupported",
        "internal.bad_argument"})
    EXPECT_NE(diag::find(id), nullptr) << id;
}

}  // namespace
}  // namespace railscope::net::verbs
