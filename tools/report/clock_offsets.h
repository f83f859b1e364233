// SPDX-License-Identifier: Apache-2.0
// Hosts' clock offsets, estimated from the profiles themselves: a collective ends at nearly the same
// moment on every rank (none can finish before the last one's data arrived), so the difference between
// two hosts' end times of the same collectives is the difference between their clocks. Straggler
// lateness compares start times across hosts and is measured only after these offsets are taken off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/report/profile_reader.h"

namespace railscope::report {

struct HostOffset {
  std::string host;
  int64_t offset_ns = 0;   // this host's clock minus the reference host's (median over collectives)
  int64_t spread_ns = 0;   // median distance of the collectives' differences from offset_ns: its noise
  size_t collectives = 0;  // collectives both hosts took part in: 0 = not aligned (offset 0)
};

struct ClockAlignment {
  std::string reference;            // the host with most records; its offset is 0
  std::vector<HostOffset> offsets;  // every other host, by name
  // Offset of a record's host (0 for the reference host, an unknown host or one that shares no collective).
  std::vector<int64_t> per_file;  // by ProfileSet file index
  int64_t max_spread_ns = 0;      // the largest spread_ns: lateness below a few of it may be the clocks
};

// Empty (no reference) when the records come from fewer than two hosts.
ClockAlignment align_clocks(const ProfileSet& set);

}  // namespace railscope::report
