// SPDX-License-Identifier: Apache-2.0
// Small port-level vocabulary shared by discovery and the pure checks.
#pragma once

#include <string_view>

namespace railscope::node {

enum class LinkLayer { Unknown, InfiniBand, Ethernet };
std::string_view to_string(LinkLayer l);  // "InfiniBand", "Ethernet", "unknown"

// ibv_port_state values (NOP 0, DOWN 1, INIT 2, ARMED 3, ACTIVE 4, ACTIVE_DEFER 5).
enum class PortState { Unknown = -1, Nop = 0, Down = 1, Init = 2, Armed = 3, Active = 4, ActiveDefer = 5 };
std::string_view to_string(PortState s);  // "ACTIVE", "DOWN", ...

// Physical state names as sysfs prints them (1 Sleep, 2 Polling, 3 Disabled, 4 PortConfigurationTraining,
// 5 LinkUp, 6 LinkErrorRecovery, 7 Phy Test); "unknown" otherwise.
std::string_view phys_state_name(int phys_state);

}  // namespace railscope::node
