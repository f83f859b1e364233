// SPDX-License-Identifier: Apache-2.0
// The descriptors a net plugin hands to the profiler are declared once
// (include/railscope/nccl/net_descriptors.h): the net side's header and the profiler side's compile in one
// translation unit (each declared them before, and the two could not), and their ids are NCCL's.
#include <gtest/gtest.h>

#include <cstdint>

#include "railscope/nccl/net.h"
#include "railscope/nccl/profiler.h"

namespace railscope::nccl {
namespace {

TEST(ProfilerDescr, NetAndProfilerHeadersShareOneDeclaration) {
  // NCCL's IB descriptor, as the verbs engine emits it and the profiler reads it.
  ncclProfilerNetIbDescr_v1_t ib{};
  ib.type = ncclProfileQp;
  ib.qp.length = 4096;
  EXPECT_EQ(ncclProfileQp, 1);
  EXPECT_EQ(NCCL_PROFILER_NET_TYPE_IB | NCCL_PROFILER_NET_IB_VER, 0x10001U);
  EXPECT_EQ((NCCL_PROFILER_NET_TYPE_SOCK | 1U) & NCCL_PROFILER_NET_TYPE_MASK, NCCL_PROFILER_NET_TYPE_SOCK);
  EXPECT_EQ(ib.qp.length, 4096U);
}

TEST(ProfilerDescr, RailscopePluginIdIsItsTypeAndVersion) {
  EXPECT_EQ(kNetRailscopePluginId, int64_t{0x52530001});
  EXPECT_EQ(static_cast<uint32_t>(kNetRailscopePluginId) & NCCL_PROFILER_NET_TYPE_MASK, kNetTypeRailscope);
  EXPECT_EQ(static_cast<uint32_t>(kNetRailscopePluginId) & NCCL_PROFILER_NET_VER_MASK, kNetRailscopeVersion);
}

}  // namespace
}  // namespace railscope::nccl
