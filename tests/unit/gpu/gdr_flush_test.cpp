// SPDX-License-Identifier: Apache-2.0
// Flush rules: the plugin's (flush enabled) and NCCL's (when it calls iflush).
#include <gtest/gtest.h>

#include <cstdlib>

#include "railscope/gpu/gdr_decision.h"
#include "railscope/gpu/gdr_flush.h"

namespace railscope::gpu {
namespace {

TEST(GdrFlush, OnlyWithGpuDirect) {
  EXPECT_FALSE(gdr_flush_policy(kPtrHost).enabled);
  EXPECT_TRUE(gdr_flush_policy(kPtrHost | kPtrCuda).enabled);
  EXPECT_TRUE(gdr_flush_policy(kPtrHost | kPtrDmabuf).enabled);
}

TEST(GdrFlush, DisabledByEnvironment) {
  setenv("NCCL_GDR_FLUSH_DISABLE", "1", 1);
  auto p = gdr_flush_policy(kPtrHost | kPtrCuda);
  unsetenv("NCCL_GDR_FLUSH_DISABLE");
  EXPECT_FALSE(p.enabled);
  EXPECT_EQ(p.reason, "NCCL_GDR_FLUSH_DISABLE=1: GPUDirect receives are not flushed");
}

TEST(GdrFlush, WhenNcclCallsIflush) {
  EXPECT_FALSE(nccl_calls_flush(false, false, 9, false));  // Hopper (H100/H200): skipped
  EXPECT_TRUE(nccl_calls_flush(false, false, 8, false));   // Ampere and older
  EXPECT_TRUE(nccl_calls_flush(true, false, 9, false));    // forceFlush property
  EXPECT_TRUE(nccl_calls_flush(false, true, 10, false));   // NCCL_NET_FORCE_FLUSH=1
  EXPECT_TRUE(nccl_calls_flush(false, false, 9, true));    // Grace: NIC near, GPU on C2C
  EXPECT_TRUE(nccl_calls_flush(false, false, -1, false));  // unknown GPU: assume needed
}

}  // namespace
}  // namespace railscope::gpu
