// The per-operation samples `railscope ab` compares, read from a profile folder.
//
// STOPGAP: this reads the profiler's JSON Lines files against the schema as `railscope ab` expects it
// (docs/pytorch.md, "Profile records read by railscope ab") until the profiler's own reader library
// (branch `profiler`, docs/profile-format.md) exists; then `read_profile_samples` should delegate to it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace railscope::ab {

struct OpSample {
  std::string op;       // "AllReduce", "AllGather", ..., "Send", "Recv"
  std::uint64_t bytes;  // message size in bytes as nccl-tests reports it
  double busbw_gbps;    // bus bandwidth, GB/s (1e9 B/s)
  double time_us;       // duration in microseconds
};

struct ProfileRead {
  std::vector<OpSample> samples;
  std::size_t files = 0;          // *.jsonl files read
  std::size_t skipped_lines = 0;  // lines that were not op records (headers, diagnoses, ...)
  std::string error;              // non-empty: the folder could not be read (first problem found)
};

// Reads every `*.jsonl` file directly inside `dir`. Malformed JSON is an error naming file and line.
ProfileRead read_profile_samples(const std::filesystem::path& dir);

}  // namespace railscope::ab
