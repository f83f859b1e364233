// SPDX-License-Identifier: Apache-2.0
// Who may speak at the rendezvous (frame_auth.h): a frame sealed with the job's key opens at the other
// end and nowhere else — not under another key or none, not replayed on the same or another
// connection, not modified, not moved to another rank or reflected back; the token file's checks; and
// rank 0's verdict sends each rank the findings about it, by rank, whatever the host names.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "frame_auth.h"
#include "frame_delivery.h"
#include "synthetic_node.h"
#include "verdict.h"

namespace railscope::preflight {
namespace {

JobKey key(std::string_view token) {
  std::string e;
  const auto k = key_from_token(token, &e);
  EXPECT_TRUE(k) << e;
  return k.value_or(JobKey{});
}

const JobKey kKey = key("0123456789abcdef0123456789abcdef");
const JobKey kOtherKey = key("fedcba9876543210fedcba9876543210");

// Both hellos exchanged: rank 0 sends first.
void handshake(FrameAuth& rank0, FrameAuth& rank) {
  std::string e;
  ASSERT_TRUE(deliver(rank, rank0.seal(FrameType::Hello, {}), &e)) << e;
  ASSERT_TRUE(deliver(rank0, rank.seal(FrameType::Hello, {}), &e)) << e;
}

TEST(FrameAuth, SealedFramesOpenAtTheOtherEndBoundToTheRank) {
  FrameAuth rank0(kKey, true, -1), rank1(kKey, false, 1);
  ASSERT_TRUE(rank0.ok() && rank1.ok());
  handshake(rank0, rank1);
  std::string e;
  const std::string report = rank1.seal(FrameType::Report, R"({"rank":1})");
  EXPECT_EQ(report.size(), kHeaderBytes + 10 + kTagBytes);
  const auto f = deliver(rank0, report, &e);
  ASSERT_TRUE(f) << e;
  EXPECT_EQ(f->type, FrameType::Report);
  EXPECT_EQ(f->rank, 1);
  EXPECT_EQ(f->payload, R"({"rank":1})");
  EXPECT_EQ(rank0.rank(), 1);
  for (int i = 0; i < 3; ++i) {  // each way, several frames in order
    const auto step = deliver(rank1, rank0.seal(FrameType::Step, "step " + std::to_string(i)), &e);
    ASSERT_TRUE(step) << e;
    EXPECT_EQ(step->payload, "step " + std::to_string(i));
    ASSERT_TRUE(deliver(rank0, rank1.seal(FrameType::Results, "r"), &e)) << e;
  }
}

TEST(FrameAuth, AStrangerWithAnotherKeyOrNoneIsRefused) {
  std::string e;
  FrameAuth rank0(kKey, true, -1), stranger(kOtherKey, false, 1);
  handshake(rank0, stranger);
  EXPECT_FALSE(deliver(rank0, stranger.seal(FrameType::Report, "{}"), &e));
  EXPECT_NE(e.find("authentication code does not match"), std::string::npos) << e;
  EXPECT_EQ(rank0.rank(), -1) << "a refused frame binds no rank";

  FrameAuth rank0b(kKey, true, -1), keyless(std::nullopt, false, 1);
  ASSERT_TRUE(deliver(keyless, rank0b.seal(FrameType::Hello, {}), &e) == std::nullopt);
  EXPECT_NE(e.find("rank 0 holds a job secret and this process has none"), std::string::npos) << e;
  EXPECT_FALSE(deliver(rank0b, keyless.seal(FrameType::Hello, {}), &e));
  EXPECT_NE(e.find("has no job secret (unauthenticated)"), std::string::npos) << e;
  // Skipping the hello does not help.
  FrameAuth rank0c(kKey, true, -1);
  const std::string raw =
      std::string("\x52\x53\x50\x33", 4) + std::string("\0\0\0\1\0\0\0\1\0\0\0\2", 12) + "{}";
  EXPECT_FALSE(deliver(rank0c, raw + std::string(kTagBytes, 'x'), &e));
  EXPECT_EQ(e, "a message before the hello");
}

TEST(FrameAuth, AReplayedModifiedMovedOrReflectedFrameIsRefused) {
  std::string e;
  FrameAuth rank0(kKey, true, -1), rank1(kKey, false, 1);
  handshake(rank0, rank1);
  const std::string report = rank1.seal(FrameType::Report, R"({"rank":1})");
  // Modified: every byte of the header, payload and tag in turn.
  for (size_t i = 0; i < report.size(); ++i) {
    std::string bad = report;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    FrameAuth fresh = rank0;
    EXPECT_FALSE(deliver(fresh, bad, &e)) << "byte " << i;
  }
  ASSERT_TRUE(deliver(rank0, report, &e)) << e;
  EXPECT_FALSE(deliver(rank0, report, &e)) << "replayed on the same connection";
  EXPECT_NE(e.find("authentication code"), std::string::npos) << e;
  // Replayed on a new connection (rank 0's new nonce).
  FrameAuth rank0_again(kKey, true, -1), relay(kKey, false, 1);
  ASSERT_TRUE(deliver(relay, rank0_again.seal(FrameType::Hello, {}), &e));
  EXPECT_FALSE(deliver(rank0_again, report, &e)) << "a report before the hello";
  ASSERT_TRUE(deliver(rank0_again, relay.seal(FrameType::Hello, {}), &e)) << e;
  EXPECT_FALSE(deliver(rank0_again, report, &e)) << "replayed on another connection";
  // Moved: a frame of rank 0 for rank 1 delivered to rank 2's connection.
  FrameAuth r0(kKey, true, -1), r2(kKey, false, 2);
  handshake(r0, r2);
  ASSERT_TRUE(deliver(r0, r2.seal(FrameType::Report, "{}"), &e)) << e;
  EXPECT_FALSE(deliver(r2, rank0.seal(FrameType::Verdict, "{}"), &e));
  // Reflected: rank 0's own frame sent back to it.
  FrameAuth a(kKey, true, -1), b(kKey, false, 1);
  handshake(a, b);
  ASSERT_TRUE(deliver(a, b.seal(FrameType::Report, "{}"), &e)) << e;
  const std::string down = a.seal(FrameType::Step, "{}");
  EXPECT_FALSE(deliver(a, down, &e)) << "reflected";
  EXPECT_TRUE(deliver(b, down, &e)) << e;
}

TEST(FrameAuth, AFrameClaimingAnotherRankOnABoundConnectionIsRefused) {
  std::string e;
  FrameAuth rank0(std::nullopt, true, -1), rank1(std::nullopt, false, 1), liar(std::nullopt, false, 2);
  handshake(rank0, rank1);
  ASSERT_TRUE(deliver(rank0, rank1.seal(FrameType::Report, "{}"), &e)) << e;
  // Unauthenticated: untagged frames, still bound to the rank of the first; no second hello.
  EXPECT_FALSE(deliver(rank0, liar.seal(FrameType::Hello, {}), &e));
  EXPECT_EQ(e, "a second hello on one connection");
  std::string forged = rank1.seal(FrameType::Results, "{}");
  forged[11] = 2;  // the header's rank
  EXPECT_FALSE(deliver(rank0, forged, &e));
  EXPECT_EQ(e, "a frame for rank 2 on the connection of rank 1");
}

TEST(FrameAuth, UnauthenticatedFramesCarryNoTag) {
  std::string e;
  FrameAuth rank0(std::nullopt, true, -1), rank1(std::nullopt, false, 1);
  handshake(rank0, rank1);
  const std::string report = rank1.seal(FrameType::Report, "{}");
  EXPECT_EQ(report.size(), kHeaderBytes + 2);
  ASSERT_TRUE(deliver(rank0, report, &e)) << e;
  EXPECT_EQ(rank0.rank(), 1);
}

TEST(FrameAuth, HeadersOutsideTheProtocolAreRefused) {
  std::string e;
  FrameAuth rank0(kKey, true, -1);
  const auto header = [](uint32_t magic, uint32_t type, uint32_t length) {
    std::string h;
    for (uint32_t v : {magic, type, 0u, length})
      for (int i = 3; i >= 0; --i) h += static_cast<char>((v >> (8 * i)) & 0xff);
    return h;
  };
  EXPECT_FALSE(rank0.body_size(header(kOldFrameMagic, 1, 10), &e));
  EXPECT_NE(e.find("older railscope preflight"), std::string::npos) << e;
  EXPECT_FALSE(rank0.body_size(header(kPriorFrameMagic, 1, 10), &e));
  EXPECT_NE(e.find("older railscope preflight"), std::string::npos) << e;
  EXPECT_FALSE(rank0.body_size(header(0x47455420, 1, 10), &e));
  EXPECT_NE(e.find("bad magic"), std::string::npos) << e;
  EXPECT_FALSE(rank0.body_size(header(kFrameMagic, 8, 10), &e));
  EXPECT_FALSE(rank0.body_size(header(kFrameMagic, 1, kMaxFrame + 1), &e));
  EXPECT_NE(e.find("over the cap"), std::string::npos) << e;
  EXPECT_EQ(rank0.body_size(header(kFrameMagic, 1, 10), &e), 10 + kTagBytes);
  EXPECT_EQ(rank0.body_size(header(kFrameMagic, 5, 33), &e), 33u) << "a hello carries no tag";
}

TEST(FrameAuth, TokenFromTextTrailingWhitespaceIgnoredShortRefused) {
  std::string e;
  const auto a = key_from_token("0123456789abcdef0123456789abcdef\n", &e);
  ASSERT_TRUE(a) << e;
  EXPECT_EQ(a->bytes, kKey.bytes);
  EXPECT_NE(a->bytes, kOtherKey.bytes);
  EXPECT_FALSE(key_from_token("short\n", &e));
  EXPECT_NE(e.find("16..4096"), std::string::npos) << e;
  EXPECT_FALSE(key_from_token(std::string(kMaxTokenBytes + 1, 'a'), &e));
}

TEST(FrameAuth, TokenFileMustBeAPrivateRegularFile) {
  char dir[] = "/tmp/rs_token_XXXXXX";
  ASSERT_TRUE(::mkdtemp(dir));
  const std::string d = dir, file = d + "/token", link = d + "/link";
  std::ofstream(file) << "0123456789abcdef0123456789abcdef\n";
  std::string e;
  ::chmod(file.c_str(), 0644);
  EXPECT_FALSE(key_from_file(file, &e)) << "world-readable";
  EXPECT_NE(e.find("mode 0644 lets group or others read"), std::string::npos) << e;
  ::chmod(file.c_str(), 0640);
  EXPECT_FALSE(key_from_file(file, &e)) << "group-readable";
  ::chmod(file.c_str(), 0600);
  const auto k = key_from_file(file, &e);
  ASSERT_TRUE(k) << e;
  EXPECT_EQ(k->bytes, kKey.bytes);
  ASSERT_EQ(::symlink(file.c_str(), link.c_str()), 0);  // a Kubernetes Secret volume's file
  EXPECT_TRUE(key_from_file(link, &e)) << e;
  EXPECT_FALSE(key_from_file(d, &e));
  EXPECT_NE(e.find("not a regular file"), std::string::npos) << e;
  EXPECT_FALSE(key_from_file(d + "/none", &e));
  EXPECT_NE(e.find("No such file"), std::string::npos) << e;
  std::remove(link.c_str());
  std::remove(file.c_str());
  ::rmdir(dir);
}

std::vector<std::string> mine(const Verdict& v, int rank) {
  std::vector<std::string> out;
  const nlohmann::json sent = rank_verdict(v, rank);
  for (const auto& m : sent["mine"]) out.push_back(m.get<std::string>());
  return out;
}

TEST(RankVerdict, FindingsGoToTheirRanksNotToAHostNameSubstring) {
  NodeReport a = healthy_node(0, 2), b = healthy_node(1, 2), r = healthy_node(2, 2);
  a.host = "hostA";
  b.host = "hostB";
  r.host = "r";  // a substring of "rail" in every consistency finding, and of nothing it owns
  b.nccl_env["NCCL_PROTO"] = "LL";
  b.findings.push_back({"memlock.too_low", "error", "memlock 64 KiB"});
  const Verdict v = decide(3, "flags", {a, b, r}, {}, {}, 60);
  ASSERT_EQ(v.concerns.size(), v.findings.size());
  const auto to_b = mine(v, 1);
  ASSERT_EQ(to_b.size(), 2u) << v.findings.size();
  EXPECT_NE(to_b[0].find("[memlock.too_low] hostB: memlock 64 KiB"), std::string::npos) << to_b[0];
  EXPECT_NE(to_b[1].find("[preflight.nccl_env] NCCL_PROTO of hostB is LL"), std::string::npos) << to_b[1];
  EXPECT_TRUE(mine(v, 2).empty()) << mine(v, 2)[0];
  EXPECT_TRUE(mine(v, 0).empty());

  // No majority: every node named gets it; a link's finding goes to both of its ends.
  Verdict tie = decide(2, "flags", {a, b}, {2}, {diag::make("preflight.node_refused", "x: y")}, 60);
  ASSERT_EQ(tie.concerns.size(), tie.findings.size());
  EXPECT_EQ(mine(tie, 0).size(), 1u);  // NCCL_PROTO differs with no majority
  EXPECT_EQ(mine(tie, 1).size(), 2u);  // and its own memlock finding
  EXPECT_EQ(mine(tie, 2).size(), 1u);  // missing
  LinkMeasurement l;
  l.src_node = "hostA", l.src_nic = "mlx5_0:1", l.dst_node = "hostB", l.dst_nic = "mlx5_0:1";
  l.src_rank = 0, l.dst_rank = 1;
  l.error = "netbench client: exit status 2";
  add_links(&tie, {l}, {});
  ASSERT_EQ(tie.concerns.size(), tie.findings.size());
  EXPECT_EQ(mine(tie, 0).size(), 2u);
  EXPECT_EQ(mine(tie, 1).size(), 3u);
  EXPECT_EQ(mine(tie, 2).size(), 1u);
}

}  // namespace
}  // namespace railscope::preflight
