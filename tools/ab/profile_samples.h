// The per-operation samples `railscope ab` compares, read from a profile folder.
//
// Reads the profiler's JSON Lines files (docs/profile-format.md, schema `railscope.profile` v1): only
// `coll` and `p2p` records with a measured duration are used. Kept small and separate on purpose: when
// the profiler's report library offers a reader, `read_profile_samples` should delegate to it.
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
};

struct ProfileRead {
  std::vector<OpSample> samples;
  std::size_t files = 0;          // *.jsonl files read
  std::size_t skipped_lines = 0;  // lines that were not op records (headers, diagnoses, ...)
  std::size_t untimed = 0;        // op records without a duration (enqueue-only, incomplete)
  std::string error;              // non-empty: the folder could not be read (first problem found)
};

// Reads every `*.jsonl` file directly inside `dir`. Malformed JSON is an error naming file and line.
ProfileRead read_profile_samples(const std::filesystem::path& dir);

}  // namespace railscope::ab
