// SPDX-License-Identifier: Apache-2.0
// Series one rank puts in the Prometheus textfile for a two-op sweep (AllReduce and AllGather, every
// power of two from 8 B to 128 MiB, as nccl-tests' -b 8 -e 128M -f 2 runs them) and for a training job's
// usual mix, and the cost of one write (format + atomic replace) of that file.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "plugin/profiler/core/prom.h"
#include "railscope/core/prom_textfile.h"

using namespace railscope::profiler;

namespace {

size_t series_in(const std::string& text) {
  size_t n = 0, at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    if (text[at] != '#') ++n;
    at = end == std::string::npos ? text.size() : end + 1;
  }
  return n;
}

PromCommSeries sweep(int comm, int nranks, int nnodes, const std::vector<Op>& ops, uint64_t from,
                     uint64_t to) {
  PromCommSeries s;
  s.comm = fmt::format("0x00000000c0ffee{:02x}", comm);
  s.rank = 0;
  s.nranks = nranks;
  s.nnodes = nnodes;
  for (Op op : ops)
    for (uint64_t bytes = from; bytes <= to; bytes *= 2) {
      for (int i = 0; i < 20; ++i) s.stats[{op, size_bucket(bytes)}].add(80.0, 100.0);
      s.records[op] += 20;
    }
  for (const char* kind : {"coll", "p2p", "proxy_op", "proxy_step", "kernel_ch", "net", "queue"})
    s.drops[kind] = 0;
  return s;
}

void measure(const char* name, const std::vector<PromCommSeries>& comms) {
  std::vector<const PromCommSeries*> ptrs;
  for (const auto& c : comms) ptrs.push_back(&c);
  PromProcess p;
  p.id.host = "node-001";
  p.id.job = "123456";
  p.id.rank = 17;
  p.id.local_rank = 1;
  p.pid = 4242;
  p.unix_seconds = 1.8e9;
  const std::string text = format_prometheus(p, ptrs);
  const std::string dir = std::filesystem::temp_directory_path() / fmt::format("prom-series-{}", getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/railscope-node-001-4242.prom";
  constexpr int kWrites = 2000;
  std::vector<double> us(kWrites);
  std::string why;
  for (double& t : us) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!railscope::core::write_prom_textfile(path, format_prometheus(p, ptrs), &why)) {
      std::fprintf(stderr, "%s\n", why.c_str());
      return;
    }
    t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }
  std::sort(us.begin(), us.end());
  std::filesystem::remove_all(dir);
  std::printf("%-34s series %5zu  bytes %7zu  write_us p50 %7.1f p90 %7.1f\n", name, series_in(text),
              text.size(), us[kWrites / 2], us[kWrites * 9 / 10]);
}

}  // namespace

int main() {
  measure("two-op sweep, 1 communicator", {sweep(1, 16, 2, {Op::AllReduce, Op::AllGather}, 8, 128ull << 20)});
  // A data+tensor+pipeline parallel rank: tensor-parallel AllReduce/AllGather/ReduceScatter of 1-64 MiB,
  // data-parallel AllReduce of 25 MiB buckets and a Broadcast of small tensors at start, pipeline Send/Recv
  // of activations (4-16 MiB), and small AllReduces (loss, grad norm).
  measure("training mix, 3 communicators",
          {sweep(1, 8, 1, {Op::AllReduce, Op::AllGather, Op::ReduceScatter}, 1ull << 20, 64ull << 20),
           sweep(2, 64, 8, {Op::AllReduce, Op::Broadcast}, 4, 32ull << 20),
           sweep(3, 2, 2, {Op::Send, Op::Recv}, 4ull << 20, 16ull << 20)});
  return 0;
}
