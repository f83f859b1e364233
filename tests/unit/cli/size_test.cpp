// SPDX-License-Identifier: Apache-2.0
// The one size parser of every `railscope` size flag (railscope/cli/size.h): binary units as NCCL and
// nccl-tests read them, and one clear error per kind of bad input.
#include "railscope/cli/size.h"

#include <gtest/gtest.h>

namespace railscope::cli {
namespace {

uint64_t ok(const std::string& text) {
  std::string error;
  const auto v = parse_size(text, error);
  EXPECT_TRUE(v.has_value()) << text << ": " << error;
  EXPECT_TRUE(error.empty()) << text;
  return v.value_or(0);
}

std::string bad(const std::string& text) {
  std::string error;
  const auto v = parse_size(text, error);
  EXPECT_FALSE(v.has_value()) << text << " parsed as " << v.value_or(0);
  EXPECT_FALSE(error.empty()) << text;
  return error;
}

TEST(CliSize, PlainBytesAndBinaryUnits) {
  EXPECT_EQ(ok("0"), 0u);
  EXPECT_EQ(ok("8"), 8u);
  EXPECT_EQ(ok("8B"), 8u);
  EXPECT_EQ(ok("64K"), 65536u);
  EXPECT_EQ(ok("64k"), 65536u);
  EXPECT_EQ(ok("64KiB"), 65536u);
  EXPECT_EQ(ok("64KB"), 65536u);
  EXPECT_EQ(ok("1MiB"), 1u << 20);
  EXPECT_EQ(ok("64m"), 64u << 20);
  EXPECT_EQ(ok("2G"), 2ull << 30);
  EXPECT_EQ(ok("2gib"), 2ull << 30);
  EXPECT_EQ(ok("3T"), 3ull << 40);
  EXPECT_EQ(ok("3TiB"), 3ull << 40);
}

TEST(CliSize, WholeByteFractions) {
  EXPECT_EQ(ok("1.5K"), 1536u);
  EXPECT_EQ(ok("0.5M"), 512u << 10);
  EXPECT_EQ(ok("1.25G"), 5ull << 28);
  EXPECT_EQ(ok(".5K"), 512u);
  EXPECT_EQ(ok("2.0"), 2u);
  EXPECT_NE(bad("0.3K").find("not a whole number of bytes"), std::string::npos);
  EXPECT_NE(bad("1.5").find("not a whole number of bytes"), std::string::npos);
}

TEST(CliSize, LimitsOfUint64) {
  EXPECT_EQ(ok("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ok("16777215T"), 16777215ull << 40);
  EXPECT_NE(bad("18446744073709551616").find("too large"), std::string::npos);
  EXPECT_NE(bad("16777216T").find("too large"), std::string::npos);
  EXPECT_NE(bad("99999999999999999999999G").find("too large"), std::string::npos);
  EXPECT_EQ(ok("18014398509481983.9990234375K"), UINT64_MAX);  // the largest fraction that fits
}

TEST(CliSize, EachKindOfBadInputSaysWhy) {
  EXPECT_NE(bad("").find("empty"), std::string::npos);
  EXPECT_NE(bad("-1").find("negative"), std::string::npos);
  EXPECT_NE(bad("-4K").find("negative"), std::string::npos);
  EXPECT_NE(bad("abc").find("not a size"), std::string::npos);
  EXPECT_NE(bad("K").find("not a size"), std::string::npos);
  EXPECT_NE(bad(".").find("not a size"), std::string::npos);
  EXPECT_NE(bad("1.K").find("not a size"), std::string::npos);
  EXPECT_NE(bad("12Q").find("unknown unit 'Q'"), std::string::npos);
  EXPECT_NE(bad("1.5.3M").find("unknown unit '.3M'"), std::string::npos);
  EXPECT_NE(bad("1 M").find("unknown unit ' M'"), std::string::npos);
  EXPECT_NE(bad(" 1M").find("not a size"), std::string::npos);
  EXPECT_NE(bad("1MM").find("unknown unit"), std::string::npos);
  EXPECT_NE(bad("1KIBB").find("unknown unit"), std::string::npos);
  EXPECT_NE(bad("0x10").find("unknown unit"), std::string::npos);
  EXPECT_NE(bad("1e6").find("unknown unit"), std::string::npos);
  EXPECT_NE(bad("1.0000000000001K").find("decimals"), std::string::npos);
}

TEST(CliSize, OptionTransformsAndBounds) {
  CLI::App app;
  uint64_t size = 7;
  add_size_option(&app, "--size", size, "A size", 1ull << 30);
  app.parse(std::vector<std::string>{"1.5K", "--size"});  // CLI11 takes the vector reversed
  EXPECT_EQ(size, 1536u);
  app.parse(std::vector<std::string>{"1G", "--size"});
  EXPECT_EQ(size, 1ull << 30);
  EXPECT_THROW(app.parse(std::vector<std::string>{"1025M", "--size"}), CLI::ValidationError);
  EXPECT_THROW(app.parse(std::vector<std::string>{"1.5.3M", "--size"}), CLI::ValidationError);
  EXPECT_NE(app.help().find("powers of 1024"), std::string::npos) << app.help();
}

TEST(CliSize, OptionLowerBound) {
  CLI::App app;
  uint64_t size = 7;
  add_size_option(&app, "--size", size, "A size", 1ull << 30, 4096);
  app.parse(std::vector<std::string>{"4K", "--size"});
  EXPECT_EQ(size, 4096u);
  try {
    app.parse(std::vector<std::string>{"4095", "--size"});
    ADD_FAILURE() << "4095 accepted below a 4096-byte floor";
  } catch (const CLI::ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("size '4095' is below the smallest allowed, 4096 bytes"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace railscope::cli
