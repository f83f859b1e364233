// SPDX-License-Identifier: Apache-2.0
// Env hygiene: tuning overrides, and NCCL_IB_GID_INDEX on InfiniBand.
#include <gtest/gtest.h>

#include <map>

#include "railscope/core/params.h"
#include "railscope/node/env_hygiene.h"

using namespace railscope::node;

namespace {
EnvLookup fake(std::map<std::string, std::string> m) {
  return [m](std::string_view n) -> std::optional<std::string> {
    auto it = m.find(std::string(n));
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}
}  // namespace

TEST(EnvHygiene, CleanEnvironment) { EXPECT_TRUE(check_env_hygiene(fake({}), true, false).empty()); }

TEST(EnvHygiene, ReportsEachTuningVariable) {
  auto f = check_env_hygiene(fake({{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "Simple"}, {"NCCL_DEBUG", "INFO"}}),
                             true, false);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].id(), "env.tuning_override");
  EXPECT_NE(f[0].detail.find("NCCL_ALGO=Ring"), std::string::npos);
  EXPECT_NE(f[1].detail.find("NCCL_PROTO=Simple"), std::string::npos);
}

TEST(EnvHygiene, GidIndexOnInfinibandOnly) {
  EXPECT_EQ(check_env_hygiene(fake({{"NCCL_IB_GID_INDEX", "3"}}), false, true).at(0).id(),
            "gid.forced_on_ib");
  EXPECT_TRUE(check_env_hygiene(fake({{"NCCL_IB_GID_INDEX", "3"}}), true, true).empty());
}

TEST(EnvHygiene, EveryTuningVariableIsRegistered) {
  for (const auto& v : tuning_variables())
    EXPECT_NE(railscope::params::find(v.name), nullptr) << v.name << " must be in the params registry";
}

TEST(EnvHygiene, ProcessEnvReadsRealEnvironment) {
  setenv("NCCL_NTHREADS", "256", 1);
  auto f = check_env_hygiene(process_env(), true, false);
  unsetenv("NCCL_NTHREADS");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].detail.find("NCCL_NTHREADS=256"), std::string::npos);
}
