// The verbs engine's copy of railscope's NetPlugin descriptor has the profiler's layout.
#include <gtest/gtest.h>

#include <cstddef>

#include "plugin/net/verbs/profiler_descr.h"
#include "railscope/nccl/profiler.h"

namespace railscope::net::verbs {
namespace {

using railscope::nccl::RailscopeNetCompletion_v1;
using railscope::nccl::RailscopeNetQp_v1;

static_assert(sizeof(RailscopeQpDescr) == sizeof(RailscopeNetQp_v1));
static_assert(offsetof(RailscopeQpDescr, device) == offsetof(RailscopeNetQp_v1, device));
static_assert(offsetof(RailscopeQpDescr, qpNum) == offsetof(RailscopeNetQp_v1, qpNum));
static_assert(offsetof(RailscopeQpDescr, opcode) == offsetof(RailscopeNetQp_v1, opcode));
static_assert(offsetof(RailscopeQpDescr, wr_id) == offsetof(RailscopeNetQp_v1, wr_id));
static_assert(offsetof(RailscopeQpDescr, length) == offsetof(RailscopeNetQp_v1, length));
static_assert(sizeof(RailscopeCompletion) == sizeof(RailscopeNetCompletion_v1));
static_assert(offsetof(RailscopeCompletion, vendorErr) == offsetof(RailscopeNetCompletion_v1, vendorErr));
static_assert(offsetof(RailscopeCompletion, bytes) == offsetof(RailscopeNetCompletion_v1, bytes));
static_assert(offsetof(RailscopeCompletion, diag_id) == offsetof(RailscopeNetCompletion_v1, diag_id));
static_assert(offsetof(RailscopeCompletion, peerRank) == offsetof(RailscopeNetCompletion_v1, peerRank));

TEST(ProfilerDescr, PluginIdIsTheProfilersRailscopeType) {
  EXPECT_EQ(kProfilerRailscopePluginId,
            static_cast<int64_t>(nccl::kNetTypeRailscope | nccl::kNetRailscopeVersion));
  EXPECT_EQ(ncclProfileQp, 1);
}

}  // namespace
}  // namespace railscope::net::verbs
