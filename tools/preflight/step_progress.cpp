// SPDX-License-Identifier: Apache-2.0
#include "step_progress.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>

namespace railscope::preflight {
namespace {

// Seconds left at the pace of the steps done so far; the running step counts from its start, so the
// first step's figure appears once it has taken a while.
double estimate_left(int steps_done, int steps, double elapsed_done, double in_step) {
  if (steps_done == 0) return -1;
  const double per_step = elapsed_done / steps_done;
  const double left = per_step * (steps - steps_done) - in_step;
  return left > 0 ? left : 0;
}

}  // namespace

StepProgress::StepProgress(int steps, int links)
    : steps_(steps),
      links_(links),
      terminal_(::isatty(STDERR_FILENO) == 1 && spdlog::should_log(spdlog::level::info)) {}

StepProgress::~StepProgress() {
  if (drawn_) std::fputs("\r\033[K", stderr);
}

std::string StepProgress::line(int step, int steps, int measured, int links, double seconds_left) {
  std::string s = fmt::format("step {} of {}, {} of {} links measured", step, steps, measured, links);
  if (seconds_left >= 0) s += fmt::format(", about {:.0f} s left", seconds_left);
  return s;
}

void StepProgress::start_step(int step) {
  step_ = step;
  step_started_ = Clock::now();
  spdlog::debug("preflight: step {} of {} starts", step + 1, steps_);
  draw();
}

void StepProgress::end_step(int links_measured_in_step) {
  measured_ += links_measured_in_step;
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - started_).count();
  const double took = std::chrono::duration<double>(now - step_started_).count();
  const double left = estimate_left(step_ + 1, steps_, elapsed, 0);
  if (terminal_) {
    draw();
  } else {
    spdlog::info("preflight: {} (step took {:.1f} s)", line(step_ + 1, steps_, measured_, links_, left),
                 took);
  }
}

void StepProgress::tick() {
  if (terminal_ && Clock::now() - last_draw_ >= std::chrono::seconds(1)) draw();
}

void StepProgress::draw() {
  if (!terminal_) return;
  const auto now = Clock::now();
  last_draw_ = now;
  const double done_elapsed = std::chrono::duration<double>(step_started_ - started_).count();
  const double in_step = std::chrono::duration<double>(now - step_started_).count();
  const double left = estimate_left(step_, steps_, done_elapsed, in_step);
  std::fprintf(stderr, "\r\033[Krailscope: preflight: %s",
               line(step_ + 1, steps_, measured_, links_, left).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace railscope::preflight
