// SPDX-License-Identifier: Apache-2.0
// Rank 0's progress through the link steps, for the operator who waits minutes on 64 nodes: on a
// terminal one line on stderr, redrawn each second (step k of n, links measured, time left); in a log
// (stderr not a terminal) one line per finished step. Both at the CLI's info level (--log-level warn
// silences them).
#pragma once

#include <chrono>
#include <string>

namespace railscope::preflight {

class StepProgress {
 public:
  using Clock = std::chrono::steady_clock;
  StepProgress(int steps, int links);
  ~StepProgress();  // ends the terminal's line
  StepProgress(const StepProgress&) = delete;
  StepProgress& operator=(const StepProgress&) = delete;

  void start_step(int step);
  void end_step(int links_measured_in_step);
  // Redraws the terminal's line at most once a second (cheap to call often).
  void tick();

  // "step 2 of 5, 12 of 40 links measured, about 30 s left" (pure: tests).
  static std::string line(int step, int steps, int measured, int links, double seconds_left);

 private:
  void draw();

  int steps_;
  int links_;
  int step_ = 0;
  int measured_ = 0;
  bool terminal_ = false;
  bool drawn_ = false;
  Clock::time_point started_ = Clock::now();
  Clock::time_point step_started_ = started_;
  Clock::time_point last_draw_{};
};

}  // namespace railscope::preflight
