// SPDX-License-Identifier: Apache-2.0
// Profiles read piece by piece as they grow (`railscope report --follow`): each pass reads only what was
// appended to each file since the previous one and feeds its whole lines to a JobState. A line still
// being written is not kept: its start is remembered and it is read again, whole, once its newline has
// arrived, so a writer that cuts a part-written line back (the profiler does on a full disk) or a line
// appended in several writes is read exactly once. A file that appears later is read from its start; one
// that shrank below what was read, or was replaced by another file under its name (rotated), is read
// again from its start, with a warning.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/report/job_state.h"
#include "tools/report/profile_reader.h"

namespace railscope::report {

class ProfileTail {
 public:
  // Reads what was appended to each profile file under `paths` since the last call (a new file from its
  // start) into `job`; returns the bytes of whole lines read. Problems (skipped lines, a file that
  // shrank) are added to `problems`, at most kProblemsPerPass of them. Throws std::runtime_error when a
  // path does not exist.
  uint64_t poll(const std::vector<std::string>& paths, JobState& job, std::vector<std::string>& problems);
  size_t files() const { return files_.size(); }

  static constexpr size_t kProblemsPerPass = 20;
  // A line longer than this is not a record the profiler writes: it is dropped rather than held.
  static constexpr size_t kMaxLineBytes = 16u << 20;

 private:
  struct File {
    FileCursor cur;
    uint64_t done = 0;      // bytes of whole lines read (or dropped); the next pass starts here
    bool skipping = false;  // dropping an overlong line up to its newline
    dev_t dev = 0;
    ino_t ino = 0;
  };
  uint64_t poll_file(const std::string& path, File& f, JobState& job, std::vector<std::string>& problems);

  std::map<std::string, File> files_;
};

}  // namespace railscope::report
