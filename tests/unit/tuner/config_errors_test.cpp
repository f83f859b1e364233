// SPDX-License-Identifier: Apache-2.0
// Every kind of config error, table-driven: the message names file, line and column, and the bad line
// is dropped while the good lines around it survive.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "config_error_cases.h"
#include "plugin/tuner/config/config.h"

namespace railscope::tuner {
namespace {

using test::ErrorCase;

class ConfigErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ConfigErrors, NamesFileLineColumnAndDropsTheLine) {
  const ErrorCase& c = GetParam();
  // A good rule after the bad text must survive.
  const std::string text = std::string(c.text) + "rule coll=reduce algo=ring proto=simple\n";
  const ParsedConfig parsed = parse_config_text(text, "site.conf");
  ASSERT_EQ(parsed.errors.size(), 1u) << (parsed.errors.empty() ? "no error" : parsed.errors[0].to_string());
  const std::string msg = parsed.errors[0].to_string();
  EXPECT_EQ(msg.rfind(std::string("site.conf:") + c.where + ": ", 0), 0u) << msg;
  EXPECT_NE(msg.find(c.message), std::string::npos) << msg;
  ASSERT_FALSE(parsed.config.rules.empty());
  EXPECT_EQ(parsed.config.rules.back().coll_mask, 1u << kReduce);
}

INSTANTIATE_TEST_SUITE_P(Table, ConfigErrors, ::testing::ValuesIn(test::kConfigErrorCases),
                         [](const ::testing::TestParamInfo<ErrorCase>& i) {
                           return std::string(i.param.name);
                         });

TEST(ConfigErrorsFile, UnreadableFileIsOneErrorAtLineZero) {
  const ParsedConfig parsed = load_config_file("/nonexistent/railscope/tuner.conf");
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_EQ(parsed.errors[0].to_string(),
            "/nonexistent/railscope/tuner.conf:0:0: cannot open the tuner config file");
}

// RAILSCOPE_TUNER_CONFIG=/dev/zero hung communicator init (the whole "file" was read).
TEST(ConfigErrorsFile, DeviceIsRefusedWithoutReadingIt) {
  const auto t0 = std::chrono::steady_clock::now();
  const ParsedConfig parsed = load_config_file("/dev/zero");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_EQ(parsed.errors[0].to_string(),
            "/dev/zero:0:0: the tuner config is not a regular file (a device, a pipe or a directory); give a "
            "file");
  const ParsedConfig dir = load_config_file("/tmp");
  ASSERT_EQ(dir.errors.size(), 1u);
  EXPECT_NE(dir.errors[0].message.find("not a regular file"), std::string::npos);
}

TEST(ConfigErrorsFile, FileOverOneMebibyteIsRefused) {
  const std::string path = "/tmp/railscope-tuner-big-" + std::to_string(::getpid()) + ".conf";
  {
    std::ofstream out(path);
    const std::string comment(1023, '#');
    for (size_t i = 0; i < 1024; ++i) out << comment << '\n';  // exactly 1 MiB: accepted
  }
  EXPECT_TRUE(load_config_file(path).errors.empty());
  std::ofstream(path, std::ios::app) << "\n";  // one byte more
  const ParsedConfig parsed = load_config_file(path);
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_EQ(parsed.errors[0].line, 0);
  EXPECT_NE(parsed.errors[0].message.find("larger than 1048576 bytes (1 MiB), the limit"), std::string::npos)
      << parsed.errors[0].message;
  std::remove(path.c_str());
}

// The overlap check compares each rule with every earlier one: the count is bounded, and what is over
// the bound is one error, not one per line.
TEST(ConfigErrorsFile, RuleCountIsBounded) {
  std::string text;
  for (size_t i = 0; i <= kMaxRules + 10; ++i)
    text += "rule coll=allreduce bytes=" + std::to_string(i) + " algo=ring\n";
  text += "allgather,0,100,ring,simple,-1,-1,-1\n";
  const auto t0 = std::chrono::steady_clock::now();
  const ParsedConfig parsed = parse_config_text(text, "many.conf");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_EQ(parsed.config.rules.size(), kMaxRules);
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_EQ(
      parsed.errors[0].to_string(),
      "many.conf:4097:1: more than 4096 rules: this line and every later rule are ignored (each rule is "
      "compared with every earlier one for overlap)");
}

TEST(ConfigErrorsFile, MeasuredEntriesAreBounded) {
  std::string text;
  for (int n = 1; n <= 1000; ++n)  // 5 collectives each: 5000 entries
    text += "measure coll=* algo=ring proto=simple nodes=" + std::to_string(n) + " lat_us=5 busbw_gbps=9\n";
  const ParsedConfig parsed = parse_config_text(text, "m.conf");
  EXPECT_LE(parsed.config.measured.size(), kMaxMeasured);
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_NE(parsed.errors[0].message.find("more than 4096 measured entries"), std::string::npos);
}

TEST(ConfigErrorsFile, ManyErrorsAreListedThenCounted) {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "bogus\n";
  const ParsedConfig parsed = parse_config_text(text, "bad.conf");
  ASSERT_EQ(parsed.errors.size(), kMaxErrorsListed + 1);
  EXPECT_EQ(parsed.errors[49].line, 50);
  EXPECT_EQ(parsed.errors.back().to_string(),
            "bad.conf:51:1: and 10 more errors from this line on (only the first 50 are listed)");
}

}  // namespace
}  // namespace railscope::tuner
