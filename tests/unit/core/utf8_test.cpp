// SPDX-License-Identifier: Apache-2.0
// Well-formed UTF-8 under a byte cap (railscope/core/utf8.h): what preflight's node reports and the
// profiler's JSON lines hold, so that nlohmann's dump() never throws on them and every rank's copy of one
// value is the same.
#include "railscope/core/utf8.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace railscope::utf8 {
namespace {

const std::string kFffd = "\xef\xbf\xbd";

TEST(Utf8, WellFormedTextUnderItsCapIsUnchanged) {
  const std::string text = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";  // 2-, 3- and 4-byte sequences
  EXPECT_EQ(well_formed(text, 255), text);
  EXPECT_EQ(well_formed("", 0), "");
  EXPECT_EQ(well_formed("abc", 2), "ab");
}

TEST(Utf8, ACapNeverCutsACharacter) {
  const std::string e_acute = "\xc3\xa9";
  std::string many;
  for (int i = 0; i < 300; ++i) many += e_acute;
  const std::string capped = well_formed(many, 255);
  EXPECT_EQ(capped.size(), 254u);  // 127 characters: the 128th would need bytes 255 and 256
  EXPECT_EQ(capped, many.substr(0, 254));
  EXPECT_EQ(well_formed("x\xf0\x9f\x98\x80", 4), "x");
  EXPECT_FALSE(nlohmann::json::parse("\"" + capped + "\"", nullptr, false).is_discarded());
}

TEST(Utf8, IllFormedBytesBecomeTheReplacementCharacter) {
  EXPECT_EQ(well_formed("a\xff", 16), "a" + kFffd);                   // not a lead byte
  EXPECT_EQ(well_formed("caf\xe9", 16), "caf" + kFffd);               // Latin-1
  EXPECT_EQ(well_formed("\xc0\xaf", 16), kFffd + kFffd);              // overlong '/'
  EXPECT_EQ(well_formed("\xed\xa0\x80", 16), kFffd + kFffd + kFffd);  // a UTF-16 surrogate
  EXPECT_EQ(well_formed("x\xe2\x82", 16), "x" + kFffd + kFffd);       // cut at the end
  EXPECT_EQ(well_formed("ab\xff", 4), "ab");                          // the replacement would not fit
  for (const char* bad : {"\xff", "\xc3", "\x80\x80", "t\xfe\xc3("}) {
    const nlohmann::json j = well_formed(bad, 64);
    EXPECT_NO_THROW((void)j.dump()) << bad;
  }
}

}  // namespace
}  // namespace railscope::utf8
