// SPDX-License-Identifier: Apache-2.0
// Describes a collective stuck in flight: which channels/peers still wait and on what, from the
// ProxyOps still running and the ProxyStep state each last recorded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plugin/profiler/core/events.h"
#include "plugin/profiler/core/jsonl_format.h"
#include "plugin/profiler/core/wait_state.h"

namespace railscope::profiler {

std::vector<WaitingOp> collect_waiting(const CollSlot& s, uint64_t now);
// The collective itself, as a coll.hang diagnosis records it (docs/profile-format.md).
StuckColl stuck_coll(const CollSlot& s, uint64_t bytes);
// The one-line detail of a coll.hang finding.
std::string hang_detail(const CollSlot& s, uint64_t bytes, int rank, uint64_t now,
                        const std::vector<WaitingOp>& waiting);

}  // namespace railscope::profiler
