// Port and GID selection policy for the verbs engine: NCCL_IB_HCA filtering and GID index choice.
// This is the seam to lib/node (shared with `railscope doctor`): everything here is answered by it.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/net/verbs/handshake.h"
#include "railscope/core/diagnosis.h"

namespace railscope::net::verbs {

// Whether NCCL_IB_HCA selects port `port` of device `device`.
bool hca_selects(std::string_view device, int port);

struct GidPick {
  int index = 0;
  std::array<uint8_t, 16> gid{};
  WireGidType type = WireGidType::Unknown;
  std::string netdev;                   // interface behind the GID (RoCE), empty when unknown
  std::vector<diag::Finding> findings;  // gid.* warnings about the choice
  bool usable = true;
};

// Chooses the GID index NCCL would use on this port.
GidPick pick_gid(ibv_context* ctx, const std::string& device, int port, const ibv_port_attr& attr);

}  // namespace railscope::net::verbs
