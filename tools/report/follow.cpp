// SPDX-License-Identifier: Apache-2.0
#include "tools/report/follow.h"

#include "tools/report/profile_tail.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>
#include <thread>

namespace railscope::report {
namespace {

uint64_t unix_now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

std::string comm_name(const Lane& l) {
  return l.op.empty() ? l.comm : fmt::format("{} ({} lane)", l.comm, l.op);
}

}  // namespace

FollowState judge(const std::vector<LaneVerdict>& verdicts, uint64_t now_unix_ns, double hang_after_s) {
  FollowState s;
  if (verdicts.empty()) {
    s.line = "waiting for profiles: no collective record yet";
    return s;
  }
  for (const LaneVerdict& v : verdicts)
    if (!v.mismatches.empty()) {
      const CallMismatch& m = v.mismatches.front();
      const CallVariant &odd = m.variants.back(), &usual = m.variants.front();
      const int odd_rank = odd.examples.empty() ? -1 : odd.examples.front();
      const auto it = v.lane->ranks.find(odd_rank);
      s.status = kFollowMismatch;
      s.line = fmt::format(
          "mismatch: communicator {}, collective {}{}: {} rank(s) (e.g. rank {} on {}) called {} count {} "
          "{}, "
          "{} rank(s) called {} count {} {}",
          comm_name(*v.lane), v.lane->op.empty() ? "#" : "seq ", m.index, odd.ranks, odd_rank,
          it == v.lane->ranks.end() || it->second.host.empty() ? "?" : it->second.host, odd.op, odd.count,
          odd.dtype, usual.ranks, usual.op, usual.count, usual.dtype);
      return s;
    }
  const LaneVerdict* stuck = nullptr;
  double stuck_s = -1;
  bool all_finished = true;
  size_t ranks = 0;
  for (const LaneVerdict& v : verdicts) {
    all_finished = all_finished && v.finished;
    ranks += v.ranks_seen;
    if (!v.hang) continue;
    const double waited = v.waiting_since_ns != 0 && now_unix_ns > v.waiting_since_ns
                              ? static_cast<double>(now_unix_ns - v.waiting_since_ns) / 1e9
                              : 0.0;
    if (waited > stuck_s) stuck = &v, stuck_s = waited;
  }
  if (stuck != nullptr) {
    const LaneVerdict& v = *stuck;
    const bool by_ord = v.lane->op.empty();
    std::string who;
    if (!v.behind.empty()) {
      const RankProgress& p = *v.behind.front();
      who = fmt::format(
          "rank {} ({} pid {}) never entered it{}", p.rank, p.host.empty() ? "?" : p.host, p.pid,
          v.behind.size() > 1 ? fmt::format(", nor did {} other ranks", v.behind.size() - 1) : "");
    } else if (!v.missing.empty()) {
      who = fmt::format(
          "rank {} has no profile{}", v.missing.front(),
          v.missing_total > 1 ? fmt::format(", nor have {} other ranks", v.missing_total - 1) : "");
    } else {
      who = "every rank entered it (see the coll.hang diagnoses for what they wait on)";
    }
    const bool confirmed = stuck_s >= hang_after_s;
    s.status = confirmed ? kFollowHang : kFollowRunning;
    s.line = fmt::format("{}: {} of {} ranks wait in {} of communicator {} for {:.0f} s; {}",
                         confirmed ? "hang" : "waiting", v.waiting,
                         v.lane->nranks > 0 ? v.lane->nranks : static_cast<int>(v.ranks_seen),
                         describe(*v.frontier, by_ord), comm_name(*v.lane), stuck_s, who);
    if (!confirmed) s.line += fmt::format(" (a hang after {:.0f} s)", hang_after_s);
    return s;
  }
  if (all_finished) {
    s.status = kFollowFinished;
    s.line = fmt::format("finished: every rank of {} communicator(s) finalized ({} ranks)", verdicts.size(),
                         ranks);
    return s;
  }
  const LaneVerdict* furthest = &verdicts.front();
  for (const LaneVerdict& v : verdicts)
    if (v.ranks_seen > furthest->ranks_seen) furthest = &v;
  s.line = fmt::format("progressing: {} communicator(s), {} ranks", verdicts.size(), ranks);
  if (furthest->frontier)
    s.line += fmt::format("; communicator {} furthest at {}", comm_name(*furthest->lane),
                          describe(*furthest->frontier, furthest->lane->op.empty()));
  return s;
}

int follow(const FollowOptions& opt, std::FILE* out) {
  ProfileTail tail;
  JobState job;
  for (;;) {
    std::vector<std::string> problems;
    tail.poll(opt.paths, job, problems);
    for (const std::string& p : problems) spdlog::warn("report: {}", p);
    const uint64_t now = unix_now_ns();
    const FollowState s = judge(job.verdicts(), now, opt.hang_after_s);
    const std::time_t t = static_cast<std::time_t>(now / 1000000000u);
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::fprintf(out, "%04d-%02d-%02dT%02d:%02d:%02dZ %s\n", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                 tm.tm_hour, tm.tm_min, tm.tm_sec, s.line.c_str());
    std::fflush(out);
    if (s.status != kFollowRunning || opt.once) return s.status;
    std::this_thread::sleep_for(std::chrono::duration<double>(opt.interval_s));
  }
}

}  // namespace railscope::report
