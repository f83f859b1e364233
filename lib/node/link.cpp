// SPDX-License-Identifier: Apache-2.0
// Names for link layers, port states and physical states.
#include "railscope/node/link.h"

namespace railscope::node {

std::string_view to_string(LinkLayer l) {
  switch (l) {
    case LinkLayer::InfiniBand: return "InfiniBand";
    case LinkLayer::Ethernet: return "Ethernet";
    case LinkLayer::Unknown: break;
  }
  return "unknown";
}

std::string_view to_string(PortState s) {
  switch (s) {
    case PortState::Nop: return "NOP";
    case PortState::Down: return "DOWN";
    case PortState::Init: return "INIT";
    case PortState::Armed: return "ARMED";
    case PortState::Active: return "ACTIVE";
    case PortState::ActiveDefer: return "ACTIVE_DEFER";
    case PortState::Unknown: break;
  }
  return "unknown";
}

std::string_view phys_state_name(int phys_state) {
  switch (phys_state) {
    case 1: return "Sleep";
    case 2: return "Polling";
    case 3: return "Disabled";
    case 4: return "PortConfigurationTraining";
    case 5: return "LinkUp";
    case 6: return "LinkErrorRecovery";
    case 7: return "Phy Test";
    default: return "unknown";
  }
}

}  // namespace railscope::node
