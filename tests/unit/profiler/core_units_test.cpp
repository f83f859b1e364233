// SPDX-License-Identifier: Apache-2.0
// Unit tests of the profiler's internal pieces, linked directly (no dlopen): bandwidth arithmetic,
// the lock-free event pool, the slow-collective detector, histograms and JSON formatting.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>

#include "plugin/profiler/core/bandwidth.h"
#include "plugin/profiler/core/event_pool.h"
#include "plugin/profiler/core/hang_report.h"
#include "plugin/profiler/core/jsonl_format.h"
#include "plugin/profiler/core/op_stats.h"
#include "plugin/profiler/core/prom.h"
#include "plugin/profiler/core/slow_detector.h"
#include "railscope/nccl/profiler.h"

namespace railscope::profiler {
namespace {

TEST(Bandwidth, NamesAndNumbersMapToOps) {
  EXPECT_EQ(op_from_name("AllReduce"), Op::AllReduce);
  EXPECT_EQ(op_from_name("ReduceScatter"), Op::ReduceScatter);
  EXPECT_EQ(op_from_name("Reduce"), Op::Reduce);
  EXPECT_EQ(op_from_name("Recv"), Op::Recv);
  EXPECT_EQ(op_from_name("SendRecv"), Op::SendRecv);
  EXPECT_EQ(op_from_name("AlltoAll"), Op::AlltoAll);
  EXPECT_EQ(op_from_name(nullptr), Op::Unknown);
  EXPECT_EQ(op_from_name("AllReduceX"), Op::Unknown);
  EXPECT_EQ(op_from_nccl_func(4), Op::AllReduce);
  EXPECT_EQ(op_from_nccl_func(99), Op::Unknown);
  EXPECT_STREQ(datatype_name_from_nccl(9), "ncclBfloat16");
  EXPECT_STREQ(datatype_name_from_nccl(-1), "unknown");
  EXPECT_STREQ(algo_name_from_nccl(6), "PAT");
  EXPECT_STREQ(proto_name_from_nccl(1), "LL128");
}

TEST(Bandwidth, DatatypeSizes) {
  EXPECT_EQ(datatype_size("ncclInt8"), 1u);
  EXPECT_EQ(datatype_size("ncclFloat8e4m3"), 1u);
  EXPECT_EQ(datatype_size("ncclBfloat16"), 2u);
  EXPECT_EQ(datatype_size("ncclFloat16"), 2u);
  EXPECT_EQ(datatype_size("ncclFloat32"), 4u);
  EXPECT_EQ(datatype_size("ncclUint64"), 8u);
  EXPECT_EQ(datatype_size("ncclFloat64"), 8u);
  EXPECT_EQ(datatype_size("float"), 0u);
  EXPECT_EQ(datatype_size(nullptr), 0u);
}

TEST(Bandwidth, NcclTestsFactorsAndSizes) {
  for (int n : {2, 8, 64}) {
    const double d = n;
    EXPECT_DOUBLE_EQ(*busbw_factor(Op::AllReduce, n), 2 * (d - 1) / d);
    for (Op op : {Op::AllGather, Op::ReduceScatter, Op::AlltoAll, Op::Gather, Op::Scatter}) {
      EXPECT_DOUBLE_EQ(*busbw_factor(op, n), (d - 1) / d);
      EXPECT_EQ(message_bytes(op, 100, 4, n), 400u * static_cast<uint64_t>(n));
    }
    for (Op op : {Op::Broadcast, Op::Reduce, Op::Send, Op::Recv}) {
      EXPECT_DOUBLE_EQ(*busbw_factor(op, n), 1.0);
      EXPECT_EQ(message_bytes(op, 100, 4, n), 400u);
    }
    EXPECT_EQ(message_bytes(Op::AllReduce, 100, 4, n), 400u);
  }
  EXPECT_FALSE(busbw_factor(Op::AllReduce, 0));
  EXPECT_FALSE(busbw_factor(Op::Unknown, 8));
  EXPECT_EQ(message_bytes(Op::AllGather, 100, 4, 0), 400u) << "unknown n counts as 1";
  EXPECT_DOUBLE_EQ(*algbw_gbs(1'000'000'000, 1e6), 1.0);
  EXPECT_FALSE(algbw_gbs(100, 0.0));
  EXPECT_FALSE(algbw_gbs(100, -1.0));
}

struct Slot {
  int value = 0;
};

TEST(EventPool, ExhaustsThenReuses) {
  EventPool<Slot> pool(3);
  Slot* a = pool.acquire();
  Slot* b = pool.acquire();
  Slot* c = pool.acquire();
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(pool.acquire(), nullptr);
  EXPECT_EQ(pool.in_use(), 3u);
  EXPECT_TRUE(pool.owns(b));
  int outside = 0;
  EXPECT_FALSE(pool.owns(&outside));
  EXPECT_FALSE(pool.owns(reinterpret_cast<char*>(b) + 1)) << "interior pointers are not slots";
  pool.release(b);
  EXPECT_EQ(pool.acquire(), b);
  EventPool<Slot> empty(0);
  EXPECT_EQ(empty.acquire(), nullptr);
}

TEST(EventPool, ConcurrentAcquireReleaseNeverHandsOutASlotTwice) {
  EventPool<Slot> pool(64);
  std::atomic<int> collisions{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20000; ++i) {
        Slot* s = pool.acquire();
        if (s == nullptr) continue;
        if (s->value != 0) collisions++;
        s->value = t + 1;
        if (s->value != t + 1) collisions++;
        s->value = 0;
        pool.release(s);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(collisions.load(), 0);
  EXPECT_EQ(pool.in_use(), 0u);
  std::set<Slot*> all;
  for (int i = 0; i < 64; ++i) all.insert(pool.acquire());
  EXPECT_EQ(all.size(), 64u);
  EXPECT_EQ(all.count(nullptr), 0u);
}

TEST(SlowDetector, FiresOncePerStreakAndResetsOnHealthyOps) {
  SlowConfig cfg;
  cfg.expected_gbs = 100;
  cfg.rails = 4;
  cfg.consecutive = 3;
  cfg.min_bytes = 1 << 20;
  SlowDetector d(cfg);
  EXPECT_FALSE(d.feed(Op::AllReduce, 1 << 30, 74, "SIMPLE"));
  EXPECT_FALSE(d.feed(Op::AllReduce, 1 << 30, 76, "SIMPLE"));
  auto f = d.feed(Op::AllReduce, 1 << 30, 75, "SIMPLE");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id(), "coll.slow.rail_down");
  EXPECT_NE(f->detail.find("one of 4 rails down"), std::string::npos) << f->detail;
  EXPECT_FALSE(d.feed(Op::AllReduce, 1 << 30, 75, "SIMPLE")) << "once per streak";
  EXPECT_FALSE(d.feed(Op::AllReduce, 1024, 1, "SIMPLE")) << "small messages are not judged";
  EXPECT_FALSE(d.feed(Op::AllReduce, 1 << 30, 95, "SIMPLE")) << "healthy resets";
  EXPECT_FALSE(d.feed(Op::AllReduce, 1 << 30, 60, "SIMPLE"));
  EXPECT_FALSE(d.feed(Op::AllReduce, 1 << 30, 60, "SIMPLE"));
  auto g = d.feed(Op::AllReduce, 1 << 30, 60, "SIMPLE");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->id(), "coll.slow") << "60 % matches no specific cause";
  SlowDetector off;
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(off.feed(Op::AllReduce, 1 << 30, 1, "SIMPLE"));
}

TEST(OpStats, BucketsAndQuantiles) {
  EXPECT_EQ(size_bucket(0), 0);
  EXPECT_EQ(size_bucket(1), 0);
  EXPECT_EQ(size_bucket(1024), 10);
  EXPECT_EQ(size_bucket(1500), 10);
  OpSizeStats s;
  for (int i = 0; i < 9; ++i) s.add(15.0, 100);
  s.add(300.0, 10);
  EXPECT_EQ(s.count, 10u);
  EXPECT_DOUBLE_EQ(s.busbw_min, 15.0);
  EXPECT_DOUBLE_EQ(s.busbw_max, 300.0);
  EXPECT_DOUBLE_EQ(s.busbw_quantile(0.5), 20.0) << "upper bound of the bin";
  PromCommSeries series;
  series.comm = "0x00000000000000ab";
  series.rank = 3;
  series.nranks = 16;
  series.nnodes = 2;
  series.stats[{Op::AllReduce, 10}] = s;
  series.stats[{Op::AllReduce, 12}] = s;  // 1 KiB and 4 KiB: one size class
  series.diagnoses["coll.hang"] = 2;
  series.drops["coll"] = 3;
  series.wait_seconds = 1.5;
  PromProcess proc;
  proc.id.host = "n1";
  proc.id.job = "4711";
  proc.pid = 42;
  const std::string prom = format_prometheus(proc, {&series});
  const std::string who = "job=\"4711\",host=\"n1\",rank=\"3\",local_rank=\"\"";
  const std::string labels = who + ",comm_ranks=\"16\",comm_nodes=\"2\"";
  // Base units: 20 GB/s = 2e+10 bytes/s counts below 5e+10; the two sizes are summed in their class.
  EXPECT_NE(prom.find("railscope_busbw_bytes_per_second_bucket{" + labels +
                      ",op=\"AllReduce\",size_class=\"small\",le=\"5e+10\"} 18"),
            std::string::npos)
      << prom;
  EXPECT_NE(prom.find("railscope_busbw_bytes_per_second_bucket{" + labels +
                      ",op=\"AllReduce\",size_class=\"small\",le=\"+Inf\"} 20"),
            std::string::npos);
  EXPECT_NE(prom.find("railscope_collective_duration_seconds_count{" + labels +
                      ",op=\"AllReduce\",size_class=\"small\"} 20"),
            std::string::npos);
  EXPECT_NE(prom.find("railscope_collective_wait_seconds{" + labels + "} 1.500"), std::string::npos);
  EXPECT_NE(prom.find("railscope_diagnoses_total{" + labels + ",id=\"coll.hang\"} 2"), std::string::npos);
  EXPECT_NE(prom.find("railscope_events_dropped_total{" + who + ",kind=\"coll\"} 3"), std::string::npos);
  EXPECT_NE(prom.find("railscope_communicator_info{" + labels +
                      ",comm=\"0x00000000000000ab\",comm_name=\"\",comm_rank=\"3\"} 1"),
            std::string::npos);
  EXPECT_EQ(prom.find("size_bytes"), std::string::npos) << "size classes, not every size";
  // Two communicators of one shape are summed into one series; the id stays only in the info series.
  PromCommSeries other = series;
  other.comm = "0x00000000000000cd";
  const std::string twice = format_prometheus(proc, {&series, &other});
  EXPECT_NE(twice.find("railscope_diagnoses_total{" + labels + ",id=\"coll.hang\"} 4"), std::string::npos)
      << twice;
  EXPECT_NE(twice.find("railscope_busbw_bytes_per_second_count{" + labels +
                       ",op=\"AllReduce\",size_class=\"small\"} 40"),
            std::string::npos);
  // The launcher's global rank replaces the rank in the communicator.
  proc.id.rank = 17;
  proc.id.local_rank = 1;
  EXPECT_NE(
      format_prometheus(proc, {&series})
          .find("railscope_collective_wait_seconds{job=\"4711\",host=\"n1\",rank=\"17\",local_rank=\"1\","),
      std::string::npos);
}

// One ACTIVE 200 Gb/s RoCE port's window, with `n` events of `category`.
PortWindow roce_port_window(node::CounterCategory category, uint64_t n) {
  PortWindow pw;
  pw.device = "mlx5_1";
  pw.port = 1;
  pw.netdev = "ens1f1";
  pw.state = "ACTIVE";
  pw.speed_mbps = 200000;
  pw.by_category[static_cast<size_t>(category)] = n;
  return pw;
}

TEST(Prometheus, SizeClassesAndPortTotals) {
  EXPECT_EQ(size_class(size_bucket(65535)), "small");
  EXPECT_EQ(size_class(size_bucket(65536)), "medium");
  EXPECT_EQ(size_class(size_bucket((16u << 20) - 1)), "medium");
  EXPECT_EQ(size_class(size_bucket(16u << 20)), "large");
  std::vector<PromPortSeries> ports;
  FabricWindow w;
  PortWindow pw = roce_port_window(node::CounterCategory::Loss, 5);
  pw.deltas.push_back(
      {"port_xmit_data", node::CounterCategory::Traffic, 100, false, node::CounterSource::Port, 100});
  w.ports.push_back(pw);
  add_window(ports, w);
  w.ports[0].state = "DOWN";
  add_window(ports, w);
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0].by_category[0], 10u);
  EXPECT_EQ(ports[0].transmit_bytes, 800u) << "port_xmit_data counts 4-byte words";
  EXPECT_EQ(ports[0].state_changes, 1u);
  PromProcess proc;
  proc.id.host = "n1";
  proc.ports = ports;
  const std::string prom = format_prometheus(proc, {});
  const std::string port = "device=\"mlx5_1\",port=\"1\",netdev=\"ens1f1\"";
  EXPECT_NE(prom.find(port + ",category=\"loss\"} 10"), std::string::npos) << prom;
  EXPECT_NE(prom.find("railscope_port_up{job=\"\",host=\"n1\",rank=\"-1\",local_rank=\"\"," + port + "} 0"),
            std::string::npos);
  EXPECT_NE(prom.find(port + "} 25000000000"), std::string::npos) << "200 Gb/s in bytes per second";
  proc.id.local_rank = 1;  // local rank 0 writes the node's ports
  EXPECT_EQ(format_prometheus(proc, {}).find("railscope_port_"), std::string::npos);
  proc.id.local_rank = 0;
  EXPECT_NE(format_prometheus(proc, {}).find("railscope_port_up{"), std::string::npos);
}

// A file with port series, as local rank 0 writes it, passes Prometheus' own linter: no name of it says
// "counter" or breaks another naming rule (the file without ports would not show it).
TEST(Prometheus, AFileWithPortSeriesPassesPromtoolsLint) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0)
    GTEST_SKIP()
        << "promtool not found: install Debian's `prometheus` package (scripts/install-deps.sh does)";
  FabricWindow w;
  w.ports.push_back(roce_port_window(node::CounterCategory::Pause, 7));
  PromProcess proc;
  proc.id.host = "n1";
  proc.id.job = "4711";
  proc.id.local_rank = 0;
  proc.pid = 42;
  add_window(proc.ports, w);
  PromCommSeries series;
  series.comm = "0x00000000000000ab";
  series.rank = 0;
  series.nranks = 8;
  series.nnodes = 1;
  series.records[Op::AllReduce] = 1;
  const std::string prom = format_prometheus(proc, {&series});
  ASSERT_NE(prom.find("railscope_port_events_total{"), std::string::npos) << prom;
  const std::string file = ::testing::TempDir() + "railscope-ports-lint.prom";
  std::ofstream(file) << prom;
  const std::string cmd = "promtool check metrics < '" + file + "' 2>&1";
  std::FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  std::array<char, 512> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
  const int status = pclose(p);
  std::remove(file.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out << "\n" << prom;
  EXPECT_EQ(out, "") << "lint findings:\n" << out;
}

TEST(JsonlFormat, RecordsAreValidJsonWithNullsForUnknowns) {
  EXPECT_EQ(json_escape("a\"b\\c\n\x01"), "a\\\"b\\\\c\\n\\u0001");
  CommIdentity c;
  c.hash = 0xabc;
  c.rank = -1;
  CollRecord r;
  r.op = Op::Broadcast;
  r.datatype = "ncclInt8";
  r.rank = 5;
  r.waits.push_back({1, 2, true, 3, 4, 5000, 6000, 7000});
  const auto j = nlohmann::json::parse(format_record(c, r));
  EXPECT_EQ(j.at("comm"), "0x0000000000000abc");
  EXPECT_EQ(j.at("rank"), 5) << "the descriptor's rank when the comm has none (v1..v3)";
  EXPECT_TRUE(j.at("nranks").is_null());
  EXPECT_TRUE(j.at("busbw_gbs").is_null());
  EXPECT_TRUE(j.at("time_us").is_null());
  EXPECT_TRUE(j.at("graph").is_null());
  EXPECT_EQ(j.at("algo"), "");
  EXPECT_DOUBLE_EQ(j.at("waits")[0].at("peer_wait_us").get<double>(), 5.0);
  diag::Finding f = diag::make("coll.hang", "x \"quoted\"");
  std::vector<WaitingOp> waiting{{0, 3, true, "SendPeerWait", 1500, WaitKind::PeerLateOrDead}};
  DiagContext ctx;
  ctx.comm = &c;
  ctx.op = "AllReduce";
  ctx.seq = 7;
  ctx.waiting = &waiting;
  const auto d = nlohmann::json::parse(format_diag(f, ctx));
  EXPECT_EQ(d.at("detail"), "x \"quoted\"");
  EXPECT_EQ(d.at("waiting")[0].at("meaning"), "peer_late_or_dead");
  const auto h = nlohmann::json::parse(format_header({"host\n", 1, 2, "t", "IB", ""}));
  EXPECT_EQ(h.at("schema"), "railscope.profile");
  EXPECT_EQ(h.at("version"), kSchemaVersion);
}

// Every line must stay valid JSON (UTF-8): ill-formed sequences become U+FFFD, well-formed
// ones pass unchanged.
TEST(JsonlFormat, InvalidUtf8BecomesTheReplacementCharacter) {
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(json_escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf");
  EXPECT_EQ(json_escape("a\xff"), "a" + fffd);
  EXPECT_EQ(json_escape("\xc0\xaf"), fffd + fffd);                        // overlong '/'
  EXPECT_EQ(json_escape("\xe0\x80\xaf"), fffd + fffd + fffd);             // overlong, 3 bytes
  EXPECT_EQ(json_escape("\xed\xa0\x80"), fffd + fffd + fffd);             // a UTF-16 surrogate
  EXPECT_EQ(json_escape("\xf4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // above U+10FFFF
  EXPECT_EQ(json_escape("x\xe2\x82"), "x" + fffd + fffd);                 // cut at the end
  EXPECT_EQ(json_escape("\xe2\x82\"q"), fffd + fffd + "\\\"q");           // cut before an escaped byte
  for (const char* bad : {"\xff", "\xc3", "\x80\x80", "t\xfe\"\n\xc3("}) {
    const std::string line = "{\"tag\":\"" + json_escape(bad) + "\"}";
    EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded()) << line;
  }
}

TEST(HangReport, StatesMeanWhatTheDocsSay) {
  EXPECT_STREQ(state_meaning(ncclProfilerProxyStepSendPeerWait_v4), "peer_late_or_dead");
  EXPECT_STREQ(state_meaning(ncclProfilerProxyStepRecvWait), "peer_late_or_dead");
  EXPECT_STREQ(state_meaning(ncclProfilerProxyStepSendWait), "network_path");
  EXPECT_STREQ(state_meaning(ncclProfilerProxyStepRecvFlushWait), "network_path");
  EXPECT_STREQ(state_meaning(ncclProfilerProxyStepSendGPUWait), "local_gpu");
  EXPECT_STREQ(state_meaning(kNoState), "unknown");
  EXPECT_STREQ(state_name(ncclProfilerProxyStepSendPeerWait_v4), "SendPeerWait");
}

}  // namespace
}  // namespace railscope::profiler
