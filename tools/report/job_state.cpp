// SPDX-License-Identifier: Apache-2.0
#include "tools/report/job_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "railscope/core/diagnosis.h"

namespace railscope::report {
namespace {

bool same_call(const CallVariant& v, const Call& c) {
  return v.op == c.op && v.count == c.count && v.dtype == c.dtype;
}

// Ranks as "3, 17, 40 and 2 more".
std::string rank_list(const std::vector<int>& ranks, size_t total) {
  std::string out;
  for (int r : ranks) out += fmt::format("{}{}", out.empty() ? "" : ", ", r);
  if (total > ranks.size()) out += fmt::format(" and {} more", total - ranks.size());
  return out;
}

std::string where(const RankProgress& r) {
  return fmt::format("rank {} ({}pid {})", r.rank, r.host.empty() ? "" : "host " + r.host + ", ", r.pid);
}

// The variants of one place, most common first; a variant with fewer ranks is the odd one out.
void sort_variants(std::vector<CallVariant>& v) {
  std::stable_sort(v.begin(), v.end(),
                   [](const CallVariant& a, const CallVariant& b) { return a.ranks > b.ranks; });
}

}  // namespace

std::string describe(const Call& c, bool by_ord) {
  return fmt::format("{} {} (seq {}, count {} {})", c.op, by_ord ? fmt::format("#{}", c.index) : "", c.seq,
                     c.count, c.dtype.empty() ? "?" : c.dtype);
}

Lane& JobState::lane(const std::string& comm, const std::string& op) {
  Lane& l = lanes_[{comm, op}];
  if (l.comm.empty()) {
    l.comm = comm;
    l.op = op;
  }
  return l;
}

RankProgress& JobState::rank(Lane& l, int rank, const std::string& host, int64_t pid) {
  RankProgress& r = l.ranks[rank];
  r.rank = rank;
  if (!host.empty()) r.host = host;
  if (pid != 0) r.pid = pid;
  return r;
}

void JobState::note_call(Lane& l, const Call& c, int rank) {
  if (!l.recent.empty() && c.index + kRecentCalls <= l.recent.rbegin()->first) return;  // older than kept
  std::vector<CallVariant>& variants = l.recent[c.index];
  auto it =
      std::find_if(variants.begin(), variants.end(), [&](const CallVariant& v) { return same_call(v, c); });
  if (it == variants.end()) {
    variants.push_back({c.op, c.count, c.dtype, 0, {}});
    it = variants.end() - 1;
  }
  ++it->ranks;
  if (it->examples.size() < kExampleRanks) it->examples.push_back(rank);
  while (l.recent.size() > kRecentCalls) {
    // A place leaving the window keeps only what it proved: a mismatch.
    auto oldest = l.recent.begin();
    if (oldest->second.size() > 1) {
      ++l.mismatches_total;
      if (l.mismatches.size() < kMismatchesKept) {
        sort_variants(oldest->second);
        l.mismatches.push_back({oldest->first, std::move(oldest->second)});
      }
    }
    l.recent.erase(oldest);
  }
}

void JobState::add_coll(const CollRow& c, const std::string& host, int64_t pid) {
  if (c.p2p || c.rank < 0) return;
  Lane& l = lane(c.comm, c.ord ? "" : c.op);
  l.nranks = std::max(l.nranks, c.nranks);
  RankProgress& r = rank(l, c.rank, host, pid);
  const Call call{c.ord.value_or(c.seq), c.op, c.count, c.dtype, c.seq};
  if (!r.entered || call.index > r.entered->index) {
    r.entered = call;
    r.waiting = !c.complete;
    r.waiting_since_ns = c.complete ? 0 : c.start_unix_ns;
  } else if (call.index == r.entered->index && c.complete) {
    r.waiting = false;  // the hang was reported, then it completed after all
  }
  if (c.complete && (!r.completed || call.index > r.completed->index)) r.completed = call;
  if (r.hang_noted != call.index) {
    note_call(l, call, c.rank);
    r.noted_max = std::max(r.noted_max.value_or(0), call.index);
  }
}

void JobState::add_diag(const DiagRow& d, const std::string& host, int64_t pid) {
  if (d.id != "coll.hang" || d.rank < 0 || !d.seq) return;
  Lane& l = lane(d.comm, d.ord ? "" : d.op);
  RankProgress& r = rank(l, d.rank, host, pid);
  const Call call{d.ord.value_or(*d.seq), d.op, d.count, d.dtype, *d.seq};
  const bool done = r.completed && r.completed->index >= call.index;
  if (!done && (!r.entered || call.index >= r.entered->index)) {
    const bool again = r.entered && r.entered->index == call.index && r.waiting;
    r.entered = call;
    r.waiting = true;
    if (!again || r.waiting_since_ns == 0)
      r.waiting_since_ns = d.start_unix_ns != 0 ? d.start_unix_ns : d.unix_ns;
  }
  // Only a diagnosis that says what was called (profiles with `ord`) can show a mismatch before the
  // collective completes; one without the count would look like one.
  // A rank's `coll` record at this place or beyond already counted what it called here.
  if (d.ord && (!r.noted_max || *r.noted_max < call.index) && r.hang_noted != call.index) {
    note_call(l, call, d.rank);
    r.noted_max = call.index;
    r.hang_noted = call.index;
  }
}

void JobState::add_finished(const FinishedRank& f) {
  for (auto& [key, l] : lanes_)
    if (key.first == f.comm)
      if (auto it = l.ranks.find(f.rank); it != l.ranks.end()) it->second.finished = true;
}

void JobState::add(const ProfileSet& set) {
  auto host = [&](uint32_t file) {
    return file < set.file_hosts.size() ? set.file_hosts[file] : std::string();
  };
  auto pid = [&](uint32_t file) { return file < set.file_pids.size() ? set.file_pids[file] : int64_t{0}; };
  for (const CollRow& c : set.colls) add_coll(c, host(c.file), pid(c.file));
  for (const DiagRow& d : set.diags) add_diag(d, host(d.file), pid(d.file));
  for (const FinishedRank& f : set.finished) add_finished(f);
}

std::vector<LaneVerdict> JobState::verdicts() const {
  std::vector<LaneVerdict> out;
  for (const auto& [key, l] : lanes_) {
    LaneVerdict v;
    v.lane = &l;
    v.ranks_seen = l.ranks.size();
    for (const auto& [r, p] : l.ranks)
      if (p.entered && (!v.frontier || p.entered->index > v.frontier->index)) v.frontier = p.entered;
    bool all_finished = !l.ranks.empty();
    for (const auto& [r, p] : l.ranks) {
      all_finished = all_finished && p.finished;
      if (!v.frontier) continue;
      if (!p.entered || p.entered->index < v.frontier->index) {
        v.behind.push_back(&p);
        continue;
      }
      ++v.at_frontier;
      if (p.completed && p.completed->index >= v.frontier->index) ++v.completed_frontier;
      if (p.waiting) {
        ++v.waiting;
        if (p.waiting_since_ns != 0 && (v.waiting_since_ns == 0 || p.waiting_since_ns < v.waiting_since_ns))
          v.waiting_since_ns = p.waiting_since_ns;
      }
    }
    uint64_t seen_in_range = 0;
    for (const auto& [r, p] : l.ranks) seen_in_range += r >= 0 && r < l.nranks ? 1 : 0;
    v.missing_total = static_cast<uint64_t>(std::max(l.nranks, 0)) - seen_in_range;
    for (int r = 0; r < l.nranks && v.missing.size() < std::min<uint64_t>(kMissingListed, v.missing_total);
         ++r)
      if (!l.ranks.contains(r)) v.missing.push_back(r);
    v.finished = all_finished && v.missing_total == 0;
    v.mismatches = l.mismatches;
    v.mismatches_total = l.mismatches_total;
    for (const auto& [index, variants] : l.recent) {
      if (variants.size() < 2) continue;
      ++v.mismatches_total;
      if (v.mismatches.size() == kMismatchesKept) continue;
      v.mismatches.push_back({index, variants});
      sort_variants(v.mismatches.back().variants);
    }
    // A rank that finalized is not behind: it left (a communicator torn down early is its own story).
    v.hang = !v.finished && v.waiting > 0;
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<DiagRow> job_findings(const std::vector<LaneVerdict>& verdicts, uint64_t now_unix_ns) {
  std::vector<DiagRow> out;
  auto add = [&](const LaneVerdict& v, const char* id, std::string detail, int rank,
                 const std::string& host) {
    const diag::Finding f = diag::make(id, std::move(detail));
    DiagRow d;
    d.id = std::string(f.id());
    d.severity = std::string(diag::to_string(f.severity));
    d.comm = v.lane->comm;
    d.rank = rank;
    d.detail = f.detail;
    d.fix = std::string(f.effective_fix());
    d.unix_ns = now_unix_ns;
    d.host = host;
    if (v.frontier) {
      d.op = v.frontier->op;
      d.seq = v.frontier->seq;
      if (v.lane->op.empty()) d.ord = v.frontier->index;
    }
    out.push_back(std::move(d));
  };
  constexpr size_t kNamed = 8;
  for (const LaneVerdict& v : verdicts) {
    const Lane& l = *v.lane;
    if (v.lane->nranks > 0 && l.ranks.empty()) continue;
    const bool by_ord = l.op.empty();
    const std::string comm = fmt::format("communicator {}{}", l.comm, by_ord ? "" : " (" + l.op + " lane)");
    if (v.hang && v.frontier) {
      const std::string waited =
          v.waiting_since_ns != 0 && now_unix_ns > v.waiting_since_ns
              ? fmt::format(" for {:.0f} s", static_cast<double>(now_unix_ns - v.waiting_since_ns) / 1e9)
              : std::string();
      const std::string stuck = fmt::format("{} of {} ranks wait in {} of {}{}", v.waiting,
                                            l.nranks > 0 ? l.nranks : static_cast<int>(v.ranks_seen),
                                            describe(*v.frontier, by_ord), comm, waited);
      size_t named = 0;
      for (const RankProgress* p : v.behind) {
        if (named++ == kNamed) break;
        add(v, "job.rank_absent",
            fmt::format(
                "{} never entered it: {}; {}", where(*p),
                p->entered ? "it last entered " + describe(*p->entered, by_ord) : "no collective of it seen",
                stuck),
            p->rank, p->host);
      }
      if (v.behind.size() > kNamed)
        add(v, "job.rank_absent",
            fmt::format("{} more ranks never entered it either; {}", v.behind.size() - kNamed, stuck), -1,
            "");
      if (v.behind.empty() && v.missing.empty())
        add(v, "coll.hang",
            fmt::format(
                "every rank entered it and none completed it: {}; no rank is missing from it, so look "
                "at a mismatch below or at what the waiting ranks wait on (their coll.hang)",
                stuck),
            -1, "");
    }
    if (!v.missing.empty()) {
      std::vector<int> shown(v.missing.begin(), v.missing.begin() + std::min(v.missing.size(), kNamed));
      add(v, "job.rank_no_profile",
          fmt::format("{} has {} ranks; no record of ranks {} ({} of {}) in the profiles given{}", comm,
                      l.nranks, rank_list(shown, v.missing_total), v.missing_total, l.nranks,
                      v.hang ? ": a rank the others wait for" : ""),
          shown.front(), "");
    }
    for (const CallMismatch& m : v.mismatches) {
      std::string d =
          fmt::format("{}, collective {}: ", comm,
                      by_ord ? fmt::format("#{}", m.index) : l.op + " seq " + std::to_string(m.index));
      for (size_t i = 0; i < m.variants.size(); ++i) {
        const CallVariant& cv = m.variants[i];
        d += fmt::format("{}{} rank{} {} called {} count {} {}", i ? "; " : "", cv.ranks,
                         cv.ranks == 1 ? "" : "s", rank_list(cv.examples, cv.ranks), cv.op, cv.count,
                         cv.dtype.empty() ? "?" : cv.dtype);
      }
      const CallVariant& odd = m.variants.back();
      const int odd_rank = odd.examples.empty() ? -1 : odd.examples.front();
      const auto it = l.ranks.find(odd_rank);
      if (it != l.ranks.end()) d += fmt::format(" ({})", where(it->second));
      add(v, "job.call_mismatch", d, odd_rank, it != l.ranks.end() ? it->second.host : "");
      out.back().op = m.variants.back().op;
      out.back().seq.reset();
      out.back().ord = by_ord ? std::optional<uint64_t>(m.index) : std::nullopt;
    }
  }
  return out;
}

}  // namespace railscope::report
