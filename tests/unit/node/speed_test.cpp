// SPDX-License-Identifier: Apache-2.0
// NCCL's port speed table as lib/node computes it: lanes from active_width, per-lane rate from
// active_speed_ex (preferred when non-zero: the only field that can say XDR) or active_speed.
#include <gtest/gtest.h>

#include "railscope/node/inventory.h"

using namespace railscope::node;

TEST(PortSpeed, XdrFromActiveSpeedEx) {
  // ibv active_width bits: 1 = 1X, 2 = 4X, 4 = 8X, 8 = 12X, 16 = 2X; XDR is active_speed_ex bit 256.
  EXPECT_EQ(port_speed_mbps(1, 0, 256), 200000);
  EXPECT_EQ(port_speed_mbps(16, 0, 256), 400000);
  EXPECT_EQ(port_speed_mbps(2, 0, 256), 800000);
  EXPECT_EQ(port_speed_mbps(8, 0, 256), 2400000);
}

TEST(PortSpeed, ActiveSpeedExPreferredWhenSet) {
  EXPECT_EQ(port_speed_mbps(2, 128, 256), 800000);  // active_speed NDR, active_speed_ex XDR: XDR
  EXPECT_EQ(port_speed_mbps(2, 128, 0), 400000);    // no active_speed_ex: NDR from active_speed
  EXPECT_EQ(speed_bits_from_ibv(32, 0), 32u);
  EXPECT_EQ(speed_bits_from_ibv(32, 256), 256u);
}

TEST(PortSpeed, NcclTable) {
  EXPECT_EQ(port_speed_mbps(1, 1, 0), 2500);     // 1X SDR
  EXPECT_EQ(port_speed_mbps(1, 4, 0), 10000);    // 1X QDR (rxe)
  EXPECT_EQ(port_speed_mbps(2, 8, 0), 40000);    // 4X FDR10
  EXPECT_EQ(port_speed_mbps(2, 16, 0), 56000);   // 4X FDR
  EXPECT_EQ(port_speed_mbps(2, 32, 0), 100000);  // 4X EDR
  EXPECT_EQ(port_speed_mbps(2, 64, 0), 200000);  // 4X HDR
  EXPECT_EQ(port_speed_mbps(4, 64, 0), 400000);  // 8X HDR
  EXPECT_EQ(port_speed_mbps(3, 32, 0), 0);       // unknown width
  EXPECT_EQ(port_speed_mbps(2, 3, 0), 0);        // unknown speed
}
