// SPDX-License-Identifier: Apache-2.0
// `railscope report --follow DIRS`: watches a running job's profiles. Every interval it reads only what
// was appended to each file since the last pass (profile_tail.h: a line still being written is read once
// its newline has arrived), feeds the job state (job_state.h: per communicator and rank aggregates, so memory
// does not grow with the job's length), prints one line saying where the job stands, and exits with a status
// a watchdog or a Slurm epilogue can act on.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/report/job_state.h"

namespace railscope::report {

// Exit statuses of --follow (docs/cli.md); 2 a path that cannot be read, 64 the usage error of every
// command.
inline constexpr int kFollowFinished = 0;  // every rank of every communicator finalized, none missing
inline constexpr int kFollowRunning = 1;   // --once: the job is neither finished nor judged stuck
inline constexpr int kFollowHang = 3;      // ranks waited in a collective for --hang-after s
inline constexpr int kFollowMismatch = 4;  // ranks called different collectives at the same place

// One pass's judgement: the exit status it calls for (kFollowRunning: keep watching) and its line.
struct FollowState {
  int status = kFollowRunning;
  std::string line;
};
FollowState judge(const std::vector<LaneVerdict>& verdicts, uint64_t now_unix_ns, double hang_after_s);

struct FollowOptions {
  std::vector<std::string> paths;
  double interval_s = 10;
  double hang_after_s = 300;
  bool once = false;  // one pass, then exit with its status
};

// Runs until the job finishes, hangs or mismatches (or after one pass with `once`); returns the status.
// One line per pass on `out`; lines that cannot be read are warnings in the CLI's log.
int follow(const FollowOptions& opt, std::FILE* out);

}  // namespace railscope::report
