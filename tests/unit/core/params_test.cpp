// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "railscope/core/log.h"
#include "railscope/core/params.h"

namespace railscope::params {
namespace {

struct IntCase {
  const char* text;
  int64_t min, max;
  std::optional<int64_t> expected;
};

TEST(Params, ParseIntTable) {
  const std::vector<IntCase> cases = {
      {"0", 0, 10, 0},
      {"10", 0, 10, 10},
      {"11", 0, 10, std::nullopt},
      {"-1", -1, 5, -1},
      {"-2", -1, 5, std::nullopt},
      {"0x10", 0, 100, 16},
      {" 7 ", 0, 10, 7},
      {"7x", 0, 10, std::nullopt},
      {"", 0, 10, std::nullopt},
      {"abc", 0, 10, std::nullopt},
      {"99999999999999999999", 0, 10, std::nullopt},
  };
  for (const auto& c : cases) {
    std::string err;
    auto v = parse_int(c.text, c.min, c.max, &err);
    EXPECT_EQ(v, c.expected) << "'" << c.text << "'";
    if (!c.expected) {
      EXPECT_FALSE(err.empty()) << c.text;
    }
  }
}

// strtoll's base 0 read "010" as octal 8 (and refused "08") while params.h promised decimal
// or 0x hex.
TEST(Params, ParseIntIsDecimalOrHexNeverOctal) {
  constexpr int64_t kMin = INT64_MIN, kMax = INT64_MAX;
  const std::vector<IntCase> cases = {
      {"010", 0, 100, 10},
      {"08", 0, 100, 8},
      {"-010", -100, 0, -10},
      {"+5", 0, 10, 5},
      {"0x1F", 0, 100, 31},
      {"0X10", 0, 100, 16},
      {"-0x10", -100, 0, -16},
      {"0x", 0, 100, std::nullopt},
      {"0x+5", 0, 100, std::nullopt},
      {"0x-5", -100, 100, std::nullopt},
      {"--5", -10, 10, std::nullopt},
      {"+-5", -10, 10, std::nullopt},
      {"- 5", -10, 10, std::nullopt},
      {"1e3", 0, 10000, std::nullopt},
      {"9223372036854775807", kMin, kMax, kMax},
      {"-9223372036854775808", kMin, kMax, kMin},
      {"9223372036854775808", kMin, kMax, std::nullopt},
      {"-9223372036854775809", kMin, kMax, std::nullopt},
      {"0x7fffffffffffffff", kMin, kMax, kMax},
      {"0x8000000000000000", kMin, kMax, std::nullopt},
  };
  for (const auto& c : cases) {
    std::string err;
    auto v = parse_int(c.text, c.min, c.max, &err);
    EXPECT_EQ(v, c.expected) << "'" << c.text << "'";
    if (!c.expected) {
      EXPECT_FALSE(err.empty()) << c.text;
    }
  }
}

TEST(Params, ParseBool) {
  std::string err;
  EXPECT_EQ(parse_bool("1", &err), true);
  EXPECT_EQ(parse_bool("Yes", &err), true);
  EXPECT_EQ(parse_bool("off", &err), false);
  EXPECT_EQ(parse_bool("maybe", &err), std::nullopt);
  EXPECT_NE(err.find("maybe"), std::string::npos);
}

std::vector<std::string>* g_lines = nullptr;
void capture(log::Level, std::string_view m) {
  if (g_lines) g_lines->emplace_back(m);
}

TEST(Params, GetIntUsesDefaultAndReportsBadValueOnce) {
  std::vector<std::string> lines;
  g_lines = &lines;
  log::set_extra_sink(capture);
  reset_reported_for_tests();
  unsetenv("NCCL_IB_GID_INDEX");
  EXPECT_EQ(get_int("NCCL_IB_GID_INDEX"), -1);
  setenv("NCCL_IB_GID_INDEX", "3", 1);
  EXPECT_EQ(get_int("NCCL_IB_GID_INDEX"), 3);
  setenv("NCCL_IB_GID_INDEX", "three", 1);
  EXPECT_EQ(get_int("NCCL_IB_GID_INDEX"), -1);
  EXPECT_EQ(get_int("NCCL_IB_GID_INDEX"), -1);
  unsetenv("NCCL_IB_GID_INDEX");
  log::set_extra_sink(nullptr);
  g_lines = nullptr;
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("[config.bad_env] NCCL_IB_GID_INDEX=three"), std::string::npos) << lines[0];
}

TEST(Params, RegistryNamesUniqueAndDescribed) {
  std::set<std::string_view> names;
  for (const Spec& s : registry()) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    EXPECT_FALSE(s.description.empty()) << s.name;
    // Besides railscope's and NCCL's own, only the schedulers' job ids (the rail board's scope) and the
    // launchers' job ids and ranks (the textfiles' labels).
    static const std::set<std::string_view> kLaunchers = {"SLURM_JOB_ID",
                                                          "PBS_JOBID",
                                                          "LSB_JOBID",
                                                          "TORCHELASTIC_RUN_ID",
                                                          "RANK",
                                                          "OMPI_COMM_WORLD_RANK",
                                                          "PMIX_RANK",
                                                          "PMI_RANK",
                                                          "SLURM_PROCID",
                                                          "LOCAL_RANK",
                                                          "OMPI_COMM_WORLD_LOCAL_RANK",
                                                          "MPI_LOCALRANKID",
                                                          "SLURM_LOCALID"};
    EXPECT_TRUE(s.name.starts_with("NCCL_") || s.name.starts_with("RAILSCOPE_") ||
                kLaunchers.count(s.name) > 0)
        << s.name;
    if (s.type == Type::Int && !s.default_value.empty()) {
      std::string err;
      EXPECT_TRUE(parse_int(s.default_value, s.min, s.max, &err)) << s.name << ": " << err;
    }
  }
}

}  // namespace
}  // namespace railscope::params
