// SPDX-License-Identifier: Apache-2.0
// The reader's fast path for coll/p2p lines (tools/report/coll_line.h) reads every line as the general
// reader does, and folding the records' waits (railscope report's memory at scale) keeps the wait matrix.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "tools/report/analysis.h"
#include "tools/report/coll_line.h"
#include "tools/report/render.h"

namespace railscope::report {
namespace {

const std::vector<std::string> kLines = {
    // As the profiler writes it (plugin/profiler/core/jsonl_format.cpp).
    R"({"type":"coll","comm":"0x5e1f010000000000","rank":3,"nranks":8,"nnodes":1,"seq":7,"op":"AllReduce",)"
    R"("dtype":"ncclBfloat16","count":4194304,"bytes":8388608,"ord":12,"root":-1,"algo":"RING","proto":"SIMPLE",)"
    R"("channels":2,"graph":false,"start_unix_ns":1764470000200012623,"end_unix_ns":1764470000200471844,)"
    R"("time_us":459.221,"timing":"gpu","algbw_gbs":18.267,"busbw_gbs":31.9673,"complete":true,"waits":[)"
    R"({"ch":0,"peer":4,"dir":"send","steps":14,"bytes":14680064,"peer_wait_us":38.627,"net_us":59.450,)"
    R"("gpu_wait_us":22.961},{"ch":0,"peer":2,"dir":"recv","steps":14,"bytes":14680064,"peer_wait_us":27.039,)"
    R"("net_us":11.890,"gpu_wait_us":9.184}],"waits_dropped":0})",
    R"({"type":"p2p","comm":"0x1","rank":1,"seq":2,"op":"Send","peer":0,"bytes":16,"time_us":null,"complete":false})",
    // A repeated key: the last one counts; strings where numbers are due and the reverse: the default.
    R"({"type":"coll","rank":1,"rank":2,"op":5,"bytes":"8","time_us":"1","complete":"yes","ord":2.0})",
    R"({"type":"coll","rank":-0,"count":1e3,"nranks":1.5e9,"waits":[1,{"peer":3,"net_us":2}],"waits":[{"ch":1}]})",
    R"({"ty\u0070e":"coll","comm":"caf\u00e9","busbw_gbs":0,"algbw_gbs":1e-3})",
    // Out of range, not JSON, another type: the general reader's (skipped with a reason, or read).
    R"({"type":"coll","bytes":18446744073709551616})",
    R"({"type":"coll","waits":[{"ch":1e40}]})",
    R"({"type":"coll","op":"\ud800"})",
    R"({"type":"summary","comm":"0x1","rank":0,"dropped":{"coll":1}})",
    R"([{"type":"coll"}])",
};

void expect_same(const CollRow& a, const CollRow& b, const std::string& line) {
  EXPECT_EQ(a.comm, b.comm) << line;
  EXPECT_EQ(a.rank, b.rank) << line;
  EXPECT_EQ(a.nranks, b.nranks) << line;
  EXPECT_EQ(a.seq, b.seq) << line;
  EXPECT_EQ(a.ord, b.ord) << line;
  EXPECT_EQ(a.op, b.op) << line;
  EXPECT_EQ(a.p2p, b.p2p) << line;
  EXPECT_EQ(a.peer, b.peer) << line;
  EXPECT_EQ(a.bytes, b.bytes) << line;
  EXPECT_EQ(a.count, b.count) << line;
  EXPECT_EQ(a.dtype, b.dtype) << line;
  EXPECT_EQ(a.redop, b.redop) << line;
  EXPECT_EQ(a.time_us, b.time_us) << line;
  EXPECT_EQ(a.busbw_gbs, b.busbw_gbs) << line;
  EXPECT_EQ(a.algbw_gbs, b.algbw_gbs) << line;
  EXPECT_EQ(a.start_unix_ns, b.start_unix_ns) << line;
  EXPECT_EQ(a.end_unix_ns, b.end_unix_ns) << line;
  EXPECT_EQ(a.complete, b.complete) << line;
  EXPECT_EQ(a.timing, b.timing) << line;
  ASSERT_EQ(a.waits.size(), b.waits.size()) << line;
  for (size_t i = 0; i < a.waits.size(); ++i) {
    EXPECT_EQ(a.waits[i].channel, b.waits[i].channel) << line;
    EXPECT_EQ(a.waits[i].peer, b.waits[i].peer) << line;
    EXPECT_EQ(a.waits[i].is_send, b.waits[i].is_send) << line;
    EXPECT_EQ(a.waits[i].bytes, b.waits[i].bytes) << line;
    EXPECT_EQ(a.waits[i].peer_wait_us, b.waits[i].peer_wait_us) << line;
    EXPECT_EQ(a.waits[i].net_us, b.waits[i].net_us) << line;
    EXPECT_EQ(a.waits[i].gpu_wait_us, b.waits[i].gpu_wait_us) << line;
  }
}

class ReportFastPath : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // One directory per test and process: ctest runs this file's tests side by side, and a shared one was
  // removed under the other test.
  const std::string dir_ = ::testing::TempDir() + "railscope-fast-path-" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
                           std::to_string(::getpid());
};

TEST_F(ReportFastPath, TakesWhatTheGeneralReaderTakesAndLeavesTheRest) {
  size_t taken = 0;
  for (const std::string& line : kLines) {
    CollRow fast;
    CollLineParser parser;
    const bool took = parser.parse(line, fast);
    // The general reader alone: a byte order mark, which nlohmann skips and simdjson refuses, sends the
    // line there.
    std::ofstream(dir_ + "/a.jsonl") << "\xEF\xBB\xBF" << line << "\n";
    const ProfileSet set = read_profiles({dir_});
    if (!took) continue;
    ++taken;
    ASSERT_EQ(set.colls.size(), 1u) << line;
    EXPECT_TRUE(set.problems.empty()) << line;
    expect_same(fast, set.colls.front(), line);
  }
  EXPECT_EQ(taken, 5u);  // the first five; out-of-range numbers, bad JSON and other records are not its
}

TEST_F(ReportFastPath, FoldedWaitsGiveTheSameReport) {
  std::ofstream out(dir_ + "/a.jsonl");
  for (int rank = 0; rank < 4; ++rank)
    for (int seq = 0; seq < 3; ++seq)
      out << R"({"type":"coll","comm":"0x1","rank":)" << rank << R"(,"nranks":4,"seq":)" << seq
          << R"(,"ord":)" << seq << R"(,"op":"AllReduce","bytes":64,"time_us":)" << 10 + rank
          << R"(,"busbw_gbs":1.5,"start_unix_ns":)" << 1000000 * seq + 1000 * rank << R"(,"end_unix_ns":)"
          << 1000000 * seq + 90000 << R"(,"waits":[{"peer":)" << (rank + 1) % 4
          << R"(,"dir":"send","peer_wait_us":)" << 0.1 * (rank + seq) << R"(,"net_us":0.3},{"peer":)"
          << (rank + 3) % 4 << R"(,"dir":"recv","peer_wait_us":1.7,"net_us":)" << 0.01 * seq << "}]}\n";
  out.close();
  const ProfileSet whole = read_profiles({dir_});
  const ProfileSet folded = read_profiles({dir_}, /*fold_waits=*/true);
  ASSERT_EQ(folded.colls.size(), 12u);
  for (const CollRow& c : folded.colls) EXPECT_TRUE(c.waits.empty());
  EXPECT_EQ(folded.folded_waits.size(), 8u);
  const Report a = analyse(whole, nullptr), b = analyse(folded, nullptr);
  ASSERT_EQ(a.waits.size(), 8u);
  EXPECT_EQ(render_json(a), render_json(b));
  EXPECT_EQ(render_text(a), render_text(b));
}

}  // namespace
}  // namespace railscope::report
