// SPDX-License-Identifier: Apache-2.0
#include "unit/profiler/job_profiles.h"

#include <unistd.h>

#include <fmt/format.h>

#include <fstream>

namespace railscope::testing_job {

namespace fs = std::filesystem;

JobDir::JobDir(const std::string& name)
    : dir_(fs::temp_directory_path() / fmt::format("{}-{}", name, getpid())) {
  fs::remove_all(dir_);
  fs::create_directories(dir_);
}

JobDir::~JobDir() { fs::remove_all(dir_); }

std::string JobDir::file(int rank, const std::string& host) const {
  return (dir_ / fmt::format("{}-{}.jsonl", host, 1000 + rank)).string();
}

void JobDir::rank(int rank, const std::string& host, const std::vector<std::string>& lines, bool torn) {
  std::ofstream f(file(rank, host));
  f << fmt::format(
           R"({{"type":"header","schema":"railscope.profile","version":1,"railscope_version":"0.1.0","hostname":"{}","pid":{},"start_unix_ns":{},"tag":"","net":"","net_plugin":""}})",
           host, 1000 + rank, kT0)
    << '\n';
  for (const std::string& l : lines) f << l << '\n';
  if (torn) f << R"({"type":"coll","comm":"0x1","rank":)" << rank << R"(,"nranks":4,"seq":)";
}

void JobDir::append(int rank, const std::string& host, const std::string& bytes) {
  std::ofstream(file(rank, host), std::ios::app | std::ios::binary) << bytes << std::flush;
}

std::string coll(const Coll& c) {
  const uint64_t start = c.start_ns != 0 ? c.start_ns : kT0 + (c.ord + 1) * 1'000'000;
  const uint64_t end = c.end_ns != 0 ? c.end_ns : start + 100'000;
  const double time_us = static_cast<double>(end - start) / 1e3;
  const double algbw = static_cast<double>(c.count * 4) / (time_us * 1e3);
  return fmt::format(
      R"({{"type":"coll","comm":"0x1","rank":{},"nranks":{},"nnodes":2,"seq":{},"ord":{},"op":"AllReduce","dtype":"ncclFloat32","count":{},"bytes":{},"root":-1,"algo":"RING","proto":"SIMPLE","channels":2,"graph":false,"start_unix_ns":{},"end_unix_ns":{},"time_us":{},"timing":"gpu","algbw_gbs":{},"busbw_gbs":{},"complete":{}}})",
      c.rank, c.nranks > 0 ? std::to_string(c.nranks) : "null", c.ord, c.ord, c.count, c.count * 4, start,
      end, c.complete ? fmt::format("{:.1f}", time_us) : "null",
      c.complete ? fmt::format("{:.2f}", algbw) : "null",
      c.complete && c.nranks > 0 ? fmt::format("{:.2f}", algbw * 2 * (c.nranks - 1) / c.nranks) : "null",
      c.complete ? "true" : "false");
}

std::string coll(int rank, uint64_t ord, bool complete, uint64_t count, int nranks) {
  return coll(Coll{rank, ord, complete, count, nranks, 0, 0});
}

std::string hang(int rank, uint64_t ord, uint64_t count, uint64_t t0) {
  return fmt::format(
      R"({{"type":"diag","id":"coll.hang","severity":"error","comm":"0x1","rank":{},"op":"AllReduce","seq":{},"ord":{},"count":{},"dtype":"ncclFloat32","bytes":{},"start_unix_ns":{},"detail":"stuck","fix":"look","unix_ns":{}}})",
      rank, ord, ord, count, count * 4, t0 + (ord + 1) * 1'000'000, t0 + 60'000'000'000);
}

std::string summary(int rank) {
  return fmt::format(R"({{"type":"summary","comm":"0x1","rank":{},"dropped":{{}}}})", rank);
}

std::vector<std::string> colls(int rank, uint64_t n) {
  std::vector<std::string> out;
  for (uint64_t i = 0; i < n; ++i) out.push_back(coll(rank, i));
  return out;
}

std::vector<std::string> finished(int rank, uint64_t n) {
  std::vector<std::string> out = colls(rank, n);
  out.push_back(summary(rank));
  return out;
}

std::string node_of(int rank) { return rank < 2 ? "nodeA" : "nodeB"; }

std::vector<std::string> waiting_in(int rank, uint64_t n, uint64_t count, uint64_t t0) {
  std::vector<std::string> out = colls(rank, n);
  out.push_back(hang(rank, n, count, t0));
  return out;
}

std::vector<std::string> stuck_in(int rank, uint64_t n, uint64_t count) {
  std::vector<std::string> out = waiting_in(rank, n, count);
  out.push_back(coll(rank, n, false, count));
  return out;
}

}  // namespace railscope::testing_job
