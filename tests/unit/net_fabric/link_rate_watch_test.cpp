// SPDX-License-Identifier: Apache-2.0
// LinkRateWatch (plugin/net/verbs/watch/link_rate_watch.h): a used port that retrains to a lower rate
// or fewer lanes while the job runs is [link.degraded], once per lower rate; back at its first rate
// is an INFO line; an unchanged, unreadable or faster port says nothing.
#include "plugin/net/verbs/watch/link_rate_watch.h"

#include <gtest/gtest.h>

namespace railscope::net::verbs {
namespace {

TEST(NetLinkRateWatch, AnUnchangedPortSaysNothing) {
  LinkRateWatch w;
  for (int i = 0; i < 5; ++i) {
    const auto c = w.look("mlx5_0:1", std::string("400 Gb/sec (4X NDR)\n"));
    EXPECT_FALSE(c.degraded.has_value());
    EXPECT_TRUE(c.restored.empty());
  }
}

TEST(NetLinkRateWatch, ALowerRateIsNamedOnceWithBothRatesThenItsReturn) {
  LinkRateWatch w;
  w.look("mlx5_0:1", std::string("400 Gb/sec (4X NDR)\n"));
  auto c = w.look("mlx5_0:1", std::string("200 Gb/sec (2X NDR)\n"));
  ASSERT_TRUE(c.degraded.has_value());
  EXPECT_EQ(c.degraded->id(), "link.degraded");
  const std::string line = diag::one_line(*c.degraded);
  EXPECT_NE(line.find("mlx5_0:1 retrained from 400 Gb/sec (4X NDR) to 200 Gb/sec (2X NDR)"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("Fix:"), std::string::npos) << line;
  EXPECT_FALSE(w.look("mlx5_0:1", std::string("200 Gb/sec (2X NDR)")).degraded.has_value());  // once
  c = w.look("mlx5_0:1", std::string("100 Gb/sec (1X NDR)"));  // lower again: named again
  ASSERT_TRUE(c.degraded.has_value());
  EXPECT_NE(c.degraded->detail.find("to 100 Gb/sec (1X NDR)"), std::string::npos) << c.degraded->detail;
  c = w.look("mlx5_0:1", std::string("400 Gb/sec (4X NDR)\n"));
  EXPECT_FALSE(c.degraded.has_value());
  EXPECT_EQ(c.restored, "mlx5_0:1 is back at 400 Gb/sec (4X NDR)");
  EXPECT_TRUE(w.look("mlx5_0:1", std::string("400 Gb/sec (4X NDR)")).restored.empty());
}

TEST(NetLinkRateWatch, FewerLanesAtTheSameRateAreDegradedToo) {
  LinkRateWatch w;
  w.look("mlx5_0:1", std::string("200 Gb/sec (4X HDR)"));
  EXPECT_TRUE(w.look("mlx5_0:1", std::string("200 Gb/sec (2X NDR)")).degraded.has_value());
}

TEST(NetLinkRateWatch, UnreadableOrUnknownSaysNothingAndFasterIsTheNewReference) {
  LinkRateWatch w;
  EXPECT_FALSE(w.look("rxe0:1", std::nullopt).degraded.has_value());
  EXPECT_FALSE(w.look("rxe0:1", std::string("garbage")).degraded.has_value());
  w.look("rxe0:1", std::string("10 Gb/sec (1X QDR)"));
  EXPECT_FALSE(w.look("rxe0:1", std::nullopt).degraded.has_value());
  auto c = w.look("rxe0:1", std::string("40 Gb/sec (4X QDR)"));
  EXPECT_FALSE(c.degraded.has_value());
  EXPECT_TRUE(c.restored.empty());
  EXPECT_TRUE(w.look("rxe0:1", std::string("10 Gb/sec (1X QDR)")).degraded.has_value());
}

}  // namespace
}  // namespace railscope::net::verbs
