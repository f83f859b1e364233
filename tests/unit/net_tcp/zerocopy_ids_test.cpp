// SPDX-License-Identifier: Apache-2.0
// The TCP engine's bookkeeping of MSG_ZEROCOPY send numbers (plugin/net/tcp/zerocopy.h): a number
// counts as released only when it and every earlier one are; ranges may arrive out of order and
// across the 32-bit wrap; the window of numbers in flight is bounded.
#include <gtest/gtest.h>

#include "plugin/net/tcp/zerocopy.h"

namespace railscope::net::tcp {
namespace {

TEST(ZeroCopyIds, ReleasedOnlyWhenEveryEarlierNumberIs) {
  ZeroCopyIds ids;
  for (uint32_t i = 0; i < 6; ++i) EXPECT_EQ(ids.take(), i);
  EXPECT_FALSE(ids.released(0));
  ids.release(2, 3);  // out of order: 0 and 1 still held
  EXPECT_FALSE(ids.released(0));
  EXPECT_FALSE(ids.released(3));
  ids.release(0, 0);
  EXPECT_TRUE(ids.released(0));
  EXPECT_FALSE(ids.released(1));
  EXPECT_FALSE(ids.released(2));
  ids.release(1, 1);
  EXPECT_TRUE(ids.released(3));
  EXPECT_FALSE(ids.released(4));
  EXPECT_TRUE(ids.outstanding());
  ids.release(4, 5);
  EXPECT_TRUE(ids.released(5));
  EXPECT_FALSE(ids.outstanding());
}

TEST(ZeroCopyIds, IgnoresNumbersNotInFlightAndBackwardRanges) {
  ZeroCopyIds ids;
  ids.take();
  ids.take();
  ids.release(5, 9);  // never sent
  EXPECT_FALSE(ids.released(0));
  ids.release(1, 0);  // hi before lo
  EXPECT_FALSE(ids.released(0));
  ids.release(0, 1);
  EXPECT_TRUE(ids.released(1));
  ids.release(0, 1);  // again: no effect
  EXPECT_FALSE(ids.outstanding());
  EXPECT_EQ(ids.take(), 2u);
  EXPECT_FALSE(ids.released(2));
}

TEST(ZeroCopyIds, WindowBoundsNumbersInFlight) {
  ZeroCopyIds ids;
  for (uint32_t i = 0; i < ZeroCopyIds::kWindow; ++i) {
    ASSERT_TRUE(ids.can_send());
    ids.take();
  }
  EXPECT_FALSE(ids.can_send());
  ids.release(1, ZeroCopyIds::kWindow - 1);  // all but the oldest: still full
  EXPECT_FALSE(ids.can_send());
  ids.release(0, 0);
  EXPECT_TRUE(ids.can_send());
  EXPECT_FALSE(ids.outstanding());
}

TEST(ZeroCopyIds, WrapsAroundTheThirtyTwoBitCounter) {
  ZeroCopyIds ids(0xFFFFFFFEu);
  uint32_t a = ids.take(), b = ids.take(), c = ids.take(), d = ids.take();
  EXPECT_EQ(a, 0xFFFFFFFEu);
  EXPECT_EQ(d, 1u);
  ids.release(c, d);  // the numbers after the wrap first
  EXPECT_FALSE(ids.released(a));
  EXPECT_FALSE(ids.released(d));
  ids.release(a, b);
  EXPECT_TRUE(ids.released(d));
  EXPECT_FALSE(ids.outstanding());
  uint32_t e = ids.take();
  EXPECT_EQ(e, 2u);
  ids.release(0xFFFFFFFEu, 2u);  // a range across the wrap
  EXPECT_TRUE(ids.released(e));
}

}  // namespace
}  // namespace railscope::net::tcp
