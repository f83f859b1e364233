// SPDX-License-Identifier: Apache-2.0
// The whole job's answer to "where is it stuck, and who is to blame": per communicator, each rank's
// furthest collective entered and completed, which ranks never entered the collective the others wait
// in, which called a different op, count or datatype at the same place, and which ranks have no profile.
//
// Fed record by record (the whole profile set for `railscope report`, what was appended for
// `--follow`); it keeps per (communicator, rank) aggregates and the last kRecentCalls collectives' call
// signatures of each communicator, never a per-record history, so its memory does not grow with the
// length of the job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tools/report/profile_reader.h"

namespace railscope::report {

// One collective as one rank called it. `index` is its place in the communicator's order: the
// profile's `ord`, or for profiles without it NCCL's per-op `seq` (then every op has a lane of its own).
struct Call {
  uint64_t index = 0;
  std::string op;
  uint64_t count = 0;
  std::string dtype;
  uint64_t seq = 0;
};

struct RankProgress {
  int rank = -1;
  std::string host;
  int64_t pid = 0;
  std::optional<Call> entered;    // the furthest collective it is known to have entered
  std::optional<Call> completed;  // the furthest it completed
  bool waiting = false;           // `entered` was reported stuck (coll.hang) or written incomplete
  uint64_t waiting_since_ns = 0;  // when it entered that collective (unix ns; 0 unknown)
  bool finished = false;          // its `summary` record (finalize) was read
  // What of it is counted among the call signatures: one vote per rank and place, although a stuck
  // collective is both a coll.hang diagnosis and, at finalize, an incomplete `coll` record.
  std::optional<uint64_t> noted_max;   // the furthest place its `coll` or coll.hang was counted
  std::optional<uint64_t> hang_noted;  // the place its last counted coll.hang is about
};

// One signature (op, count, datatype) called at one place, by how many ranks, with a few of them.
struct CallVariant {
  std::string op;
  uint64_t count = 0;
  std::string dtype;
  size_t ranks = 0;
  std::vector<int> examples;  // the first kExampleRanks ranks
};

struct CallMismatch {
  uint64_t index = 0;
  std::vector<CallVariant> variants;  // the most common first
};

// A communicator (or, without `ord`, one op of it).
struct Lane {
  std::string comm;
  std::string op;  // "" when the lane is keyed by `ord` (every collective of the communicator)
  int nranks = 0;  // from the records; 0 when no record says (ABI v1..v3)
  std::map<int, RankProgress> ranks;
  std::map<uint64_t, std::vector<CallVariant>> recent;  // the last kRecentCalls places
  std::vector<CallMismatch> mismatches;                 // the first kMismatchesKept found
  size_t mismatches_total = 0;
};

inline constexpr size_t kRecentCalls = 65536;
inline constexpr size_t kMismatchesKept = 16;
inline constexpr size_t kExampleRanks = 4;
inline constexpr size_t kMissingListed = 64;

// What a lane's state means; the verdict of `railscope report` and of each `--follow` pass.
struct LaneVerdict {
  const Lane* lane = nullptr;
  size_t ranks_seen = 0;
  std::optional<Call> frontier;  // the furthest collective any rank entered
  size_t at_frontier = 0;        // ranks that entered it
  size_t waiting = 0;            // of those, ranks reported stuck in it
  size_t completed_frontier = 0;
  uint64_t waiting_since_ns = 0;            // the earliest entry of a waiting rank (0 unknown)
  std::vector<const RankProgress*> behind;  // ranks that never entered the frontier, by rank
  // Ranks in [0, nranks) with no record at all: the first kMissingListed, and how many in all (a
  // record's nranks is not trusted to size anything).
  std::vector<int> missing;
  uint64_t missing_total = 0;
  std::vector<CallMismatch> mismatches;  // the first kMismatchesKept places where ranks' calls differ
  size_t mismatches_total = 0;
  bool hang = false;      // ranks wait in the frontier while others never entered it or none is missing
  bool finished = false;  // every rank finalized and none is missing
};

class JobState {
 public:
  void add_coll(const CollRow& c, const std::string& host, int64_t pid);
  // Only coll.hang diagnoses say something about the job's progress; the others are ignored.
  void add_diag(const DiagRow& d, const std::string& host, int64_t pid);
  void add_finished(const FinishedRank& f);
  // Everything of a profile set (its records in any order).
  void add(const ProfileSet& set);

  const std::map<std::pair<std::string, std::string>, Lane>& lanes() const { return lanes_; }
  std::vector<LaneVerdict> verdicts() const;

 private:
  Lane& lane(const std::string& comm, const std::string& op);
  RankProgress& rank(Lane& l, int rank, const std::string& host, int64_t pid);
  void note_call(Lane& l, const Call& c, int rank);

  std::map<std::pair<std::string, std::string>, Lane> lanes_;
};

// "AllReduce #4213 (seq 2100, count 1048576 ncclFloat32)"
std::string describe(const Call& c, bool by_ord);
// Findings (job.rank_absent, job.call_mismatch, job.rank_no_profile) with the facts of each case.
std::vector<DiagRow> job_findings(const std::vector<LaneVerdict>& verdicts, uint64_t now_unix_ns);

}  // namespace railscope::report
