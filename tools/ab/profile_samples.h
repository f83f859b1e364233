// SPDX-License-Identifier: Apache-2.0
// The per-operation samples `railscope ab` compares, read from one run's profile folder with the
// profiler's own reader (tools/report/profile_reader.h, docs/profile-format.md): only `coll` and
// `p2p` records with a measured duration and busbw count.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace railscope::ab {

struct OpSample {
  std::string op;       // "AllReduce", "AllGather", ..., "Send", "Recv"
  std::uint64_t bytes;  // message size in bytes as nccl-tests reports it
  double busbw_gbps;    // bus bandwidth, GB/s (1e9 B/s), the record's `busbw_gbs`
  double time_us;       // duration in microseconds
  // Which collective (the same on every rank): its communicator and ordinal (`ord`, else `seq`).
  std::string comm;
  std::uint64_t ordinal = 0;
  std::string algo, proto;  // what NCCL ran it with ("RING", "SIMPLE"; "" when not recorded)
};

struct ProfileRead {
  std::vector<OpSample> samples;
  std::size_t files = 0;              // *.jsonl files read
  std::size_t untimed = 0;            // op records without a duration (enqueue-only, incomplete)
  std::vector<std::string> warnings;  // "file:line: why" for every line the reader skipped
  std::string error;                  // non-empty: the folder could not be read (missing, no profile)
};

ProfileRead read_profile_samples(const std::filesystem::path& dir);

}  // namespace railscope::ab
