// SPDX-License-Identifier: Apache-2.0
#include "payload.h"

#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "options.h"
#include "report.h"

namespace railscope::netbench {
namespace {

TEST(NetbenchPayload, FilledMessageVerifiesForEverySize) {
  const Payload p(0x1234, 5);
  for (size_t size : {0, 1, 7, 8, 9, 23, 24, 25, 63, 64, 1000, 4096, 65537}) {
    std::vector<unsigned char> buf(size);
    for (uint64_t seq : {0, 3, 11}) {
      p.fill(buf.data(), size, p.pattern_of(seq));
      Payload::stamp(buf.data(), size, seq);
      EXPECT_FALSE(p.verify(buf.data(), size, seq).has_value()) << "size " << size << " seq " << seq;
    }
  }
}

TEST(NetbenchPayload, EveryCorruptedByteIsFound) {
  const Payload p(99, 3);
  for (size_t size : {1, 9, 24, 100}) {
    std::vector<unsigned char> buf(size);
    for (size_t i = 0; i < size; ++i) {
      p.fill(buf.data(), size, p.pattern_of(4));
      Payload::stamp(buf.data(), size, 4);
      buf[i] ^= 0x01;
      const auto m = p.verify(buf.data(), size, 4);
      ASSERT_TRUE(m.has_value()) << "size " << size << " byte " << i;
      EXPECT_EQ(m->offset, i);
    }
  }
}

TEST(NetbenchPayload, StaleDataFromThePreviousMessageIsFound) {
  // With pattern_count = slots + 1, the message that used a receive buffer before has another pattern.
  const Payload p(7, 4);  // 3 receive slots
  for (size_t size : {8, 16, 64}) {
    std::vector<unsigned char> buf(size);
    p.fill(buf.data(), size, p.pattern_of(2));
    Payload::stamp(buf.data(), size, 2);
    EXPECT_TRUE(p.verify(buf.data(), size, 5).has_value()) << size;  // seq 5 lands where seq 2 was
  }
}

TEST(NetbenchPayload, WrongSequenceNumberIsReportedAsHeader) {
  const Payload p(1, 2);
  std::vector<unsigned char> buf(64);
  p.fill(buf.data(), 64, 0);
  Payload::stamp(buf.data(), 64, 2);
  const auto m = p.verify(buf.data(), 64, 4);  // same pattern, other sequence number
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->what.find("header"), std::string::npos);
}

TEST(NetbenchPayload, ChecksumDependsOnEveryByte) {
  std::vector<unsigned char> a(37, 0x5a);
  const uint64_t base = checksum(a.data(), a.size(), 1);
  for (size_t i = 0; i < a.size(); ++i) {
    auto b = a;
    b[i] ^= 0x80;
    EXPECT_NE(checksum(b.data(), b.size(), 1), base) << i;
  }
  EXPECT_NE(checksum(a.data(), 36, 1), base);
}

TEST(NetbenchOptions, SizesArePowersOfTwo) {
  EXPECT_EQ(run_sizes(8, 64), (std::vector<uint64_t>{8, 16, 32, 64}));
  EXPECT_EQ(run_sizes(0, 4), (std::vector<uint64_t>{0, 1, 2, 4}));
  EXPECT_EQ(run_sizes(5, 20), (std::vector<uint64_t>{8, 16}));
  EXPECT_EQ(run_sizes(8, 64ULL << 20).size(), 24u);
}

TEST(NetbenchOptions, PlanFitsTheRegion) {
  Options o;
  o.recvs = 8;
  o.window = 32;
  const uint64_t region = region_bytes(o);
  EXPECT_LE(region, o.buffer_cap);
  for (uint64_t size : run_sizes(8, 64ULL << 20)) {
    const SizePlan p = plan_size(o, size, region);
    EXPECT_LE(p.size * (uint64_t{p.window} * p.recvs + 1), std::max(region, 2 * size)) << size;
    EXPECT_GE(p.window, 1u);
    EXPECT_LE(p.window, 32u);
    EXPECT_EQ(p.messages % p.recvs, 0u);
    EXPECT_EQ(p.warmup % p.recvs, 0u);
    EXPECT_GT(p.messages, p.warmup);
    EXPECT_GE(p.lat_iters, 2u);
  }
  EXPECT_EQ(plan_size(o, 4096, region).recvs, 8u);
}

// The README demo's --bytes-per-size 8M left 1 to 4 MiB rows measured from 2 to 8 messages.
TEST(NetbenchOptions, EverySizeRunsAtLeastMinMessages) {
  Options o;
  o.iters = 200;
  o.lat_iters = 100;
  o.bytes_per_size = 8ULL << 20;
  o.max_size = 4ULL << 20;
  const uint64_t region = region_bytes(o);
  for (uint64_t size : run_sizes(8, 4ULL << 20)) {
    const SizePlan p = plan_size(o, size, region);
    EXPECT_GE(p.messages - p.warmup, 16u) << size;
    EXPECT_GE(p.lat_iters, 16u) << size;
  }
  EXPECT_EQ(plan_size(o, 8, region).messages - plan_size(o, 8, region).warmup, 200u) << "--iters still rules";
  o.iters = 4;  // asked for explicitly: kept (and the row marked)
  EXPECT_EQ(plan_size(o, 4ULL << 20, region).messages - plan_size(o, 4ULL << 20, region).warmup, 4u);
  o.iters = 200;
  o.min_messages = 2;  // the old behaviour on request
  EXPECT_EQ(plan_size(o, 4ULL << 20, region).messages - plan_size(o, 4ULL << 20, region).warmup, 2u);
}

TEST(NetbenchOptions, ShortPhasesRunAgainLongEnough) {
  Options o;  // --min-time 0.2
  EXPECT_EQ(messages_for_min_time(o, 100, 0.5), 100u) << "long enough";
  EXPECT_EQ(messages_for_min_time(o, 100, 0.2), 100u);
  EXPECT_EQ(messages_for_min_time(o, 100, 0.1), 221u) << "twice as long, with a 10 % margin";
  EXPECT_EQ(messages_for_min_time(o, 100, 0.0001), 6401u) << "at most 64 times as many";
  EXPECT_EQ(messages_for_min_time(o, 100, 0), 6401u);
  EXPECT_EQ(messages_for_min_time(o, 0, 0), 0u);
  o.min_time_s = 0;
  EXPECT_EQ(messages_for_min_time(o, 100, 0.0001), 100u) << "--min-time 0: off";
}

// Parsing sizes moved to the one parser of every command (tests/unit/cli/size_test.cpp keeps these
// cases: 8, 64K, 1MiB, 64m, and errors for abc and 12Q).
TEST(NetbenchReport, SizesPrint) {
  EXPECT_EQ(format_size(8), "8");
  EXPECT_EQ(format_size(65536), "64K");
  EXPECT_EQ(format_size(64u << 20), "64M");
}

TEST(NetbenchReport, Percentiles) {
  EXPECT_EQ(percentile({}, 50), 0);
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  EXPECT_EQ(percentile(v, 50), 50);
  EXPECT_EQ(percentile(v, 99), 99);
  EXPECT_EQ(percentile({3.0}, 99), 3.0);
}

}  // namespace
}  // namespace railscope::netbench

namespace railscope::netbench {
namespace {

// No JSON object netbench writes has two keys that differ only by case ("GBps" and "Gbps"
// did), and the bandwidth keys follow the units convention (docs/cli.md: gbs bytes, gbits bits).
void expect_no_case_twins(const nlohmann::json& j, const std::string& where) {
  if (j.is_object()) {
    std::map<std::string, std::string> seen;
    for (const auto& [key, value] : j.items()) {
      std::string folded = key;
      for (char& c : folded) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      const auto [it, fresh] = seen.emplace(folded, key);
      EXPECT_TRUE(fresh) << where << ": keys '" << it->second << "' and '" << key << "' differ only by case";
      expect_no_case_twins(value, where + "." + key);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) expect_no_case_twins(j[i], where + "[" + std::to_string(i) + "]");
  }
}

TEST(NetbenchReport, JsonKeysDifferBeyondCase) {
  RunHeader h;
  h.plugin_path = "/x/libnccl-net-railscope.so";
  Row bw_and_lat;
  bw_and_lat.size = 1 << 20;
  bw_and_lat.bytes_per_s = 12.5e9;
  bw_and_lat.lat_iters = 10;
  bw_and_lat.lat_p50_us = 3;
  bw_and_lat.lat_p99_us = 4;
  bw_and_lat.mismatches = 1;
  bw_and_lat.first_mismatch = "byte 3";
  const auto j = nlohmann::json::parse(to_json(h, {bw_and_lat, Row{}}));
  expect_no_case_twins(j, "$");
  const auto& row = j["results"][0];
  EXPECT_DOUBLE_EQ(row["gbs"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(row["gbits"].get<double>(), 100.0);
  EXPECT_FALSE(row.contains("GBps"));
}

}  // namespace
}  // namespace railscope::netbench
