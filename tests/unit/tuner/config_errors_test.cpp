// Every kind of config error, table-driven: the message names file, line and column, and the bad line
// is dropped while the good lines around it survive.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace railscope::tuner
