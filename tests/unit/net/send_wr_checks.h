// SPDX-License-Identifier: Apache-2.0
// Checks shared by the tests of work requests built into memory that is not zeroed first
// (receiver_driven_writes_test.cpp, rdma_write_test.cpp).
#pragma once

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <string>

namespace railscope::net::verbs {

// What no RDMA write sets: a byte of garbage left there would reach the provider.
inline void expect_rest_zero(const ibv_send_wr& w, const std::string& at = {}) {
  EXPECT_EQ(w.wr.atomic.swap, 0u) << at;
  EXPECT_EQ(w.wr.atomic.rkey, 0u) << at;
  EXPECT_EQ(w.wr.atomic.compare_add >> 32, 0u) << at;
  EXPECT_EQ(w.qp_type.xrc.remote_srqn, 0u) << at;
  EXPECT_EQ(w.bind_mw.mw, nullptr) << at;
  EXPECT_EQ(w.bind_mw.rkey, 0u) << at;
  EXPECT_EQ(w.bind_mw.bind_info.mr, nullptr) << at;
  EXPECT_EQ(w.bind_mw.bind_info.addr, 0u) << at;
  EXPECT_EQ(w.bind_mw.bind_info.length, 0u) << at;
  EXPECT_EQ(w.bind_mw.bind_info.mw_access_flags, 0u) << at;
}

}  // namespace railscope::net::verbs
