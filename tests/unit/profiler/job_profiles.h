// SPDX-License-Identifier: Apache-2.0
// A job's profiles written as the profiler writes them, one file per rank: headers, `coll` records of
// communicator 0x1 (an AllReduce of ncclFloat32 per place of its order), the profiler's `coll.hang`
// diagnoses and `summary` records, a line cut mid-record, and bytes appended while a reader follows.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace railscope::testing_job {

inline constexpr uint64_t kT0 = 1'764'470'000'000'000'000;
inline constexpr uint64_t kCount = 262144;

// One profile directory of a job: one file per rank, `<host>-<pid>.jsonl`, pid = 1000 + rank.
class JobDir {
 public:
  explicit JobDir(const std::string& name);
  ~JobDir();
  JobDir(const JobDir&) = delete;
  JobDir& operator=(const JobDir&) = delete;

  // Rank `rank` on `host`: its header, then `lines`; `torn` appends a line cut mid-record.
  void rank(int rank, const std::string& host, const std::vector<std::string>& lines, bool torn = false);
  // Appends `bytes` as they are (no newline added) to that rank's file, in one write.
  void append(int rank, const std::string& host, const std::string& bytes);
  std::string file(int rank, const std::string& host) const;
  std::string path() const { return dir_.string(); }

 private:
  std::filesystem::path dir_;
};

// One `coll` record of communicator 0x1 (seq = ord).
struct Coll {
  int rank = 0;
  uint64_t ord = 0;
  bool complete = true;
  uint64_t count = kCount;
  int nranks = 4;         // 0: the record has none (ABI v1..v3)
  uint64_t start_ns = 0;  // 0: kT0 + (ord + 1) ms
  uint64_t end_ns = 0;    // 0: start + 100 us
};
std::string coll(const Coll& c);
std::string coll(int rank, uint64_t ord, bool complete = true, uint64_t count = kCount, int nranks = 4);
// The profiler's coll.hang diagnosis for the ord-th collective, entered at t0 + (ord + 1) ms.
std::string hang(int rank, uint64_t ord, uint64_t count = kCount, uint64_t t0 = kT0);
std::string summary(int rank);
// Collectives 0..n-1, completed.
std::vector<std::string> colls(int rank, uint64_t n);
// A rank that completed collectives 0..n-1, then finalized (its summary).
std::vector<std::string> finished(int rank, uint64_t n);
// The host of a rank of a 4-rank job on two nodes: nodeA for ranks 0 and 1, nodeB for the others.
std::string node_of(int rank);
// A rank that completed collectives 0..n-1 and waits in the n-th: its coll.hang (a running job).
std::vector<std::string> waiting_in(int rank, uint64_t n, uint64_t count = kCount, uint64_t t0 = kT0);
// The same rank after finalize: its coll.hang, then the incomplete record written at finalize.
std::vector<std::string> stuck_in(int rank, uint64_t n, uint64_t count = kCount);

}  // namespace railscope::testing_job
