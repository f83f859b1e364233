// SPDX-License-Identifier: Apache-2.0
// The job's secret from a launcher's credential service (frame_auth.h, job_credentials.h): a rank's
// hello carries a credential holding a fresh key for that connection, bound to its rank, the hello's
// nonce and the job; rank 0 takes the key and the rank from it. A stand-in service here (what it vouches
// for is set per test); munge_credentials_test.cpp runs the same handshake through a real munged.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "frame_auth.h"
#include "frame_delivery.h"

namespace railscope::preflight {
namespace {

// Credentials as a service would make them: opaque, vouching for a uid, opened once.
class FakeService final : public CredentialService {
 public:
  explicit FakeService(unsigned maker_uid = 1000, unsigned own_uid = 1000)
      : maker_(maker_uid), own_(own_uid) {}
  const char* name() const override { return "munge"; }
  unsigned uid() const override { return own_; }
  std::optional<std::string> seal(std::string_view payload, std::string* error) const override {
    if (down_) return *error = "munge: Failed to access socket", std::nullopt;
    return "CRED:" + std::to_string(maker_) + ":" + std::string(payload);
  }
  std::optional<OpenedCredential> open(std::string_view c, std::string* error) const override {
    if (c.substr(0, 5) != "CRED:") return *error = "munge: Invalid credential format", std::nullopt;
    if (!opened_.insert(std::string(c)).second) return *error = "munge: Replayed credential", std::nullopt;
    const size_t colon = c.find(':', 5);
    OpenedCredential o;
    o.uid = static_cast<unsigned>(std::stoul(std::string(c.substr(5, colon - 5))));
    o.payload = std::string(c.substr(colon + 1));
    return o;
  }
  bool down_ = false;

 private:
  unsigned maker_, own_;
  mutable std::set<std::string> opened_;
};

JobSecret munge(std::shared_ptr<const CredentialService> s, std::string job = "4242") {
  return JobSecret(std::move(s), std::move(job));
}

TEST(FrameAuthCredentials, ARanksCredentialBindsItsRankAndKeysTheConnection) {
  const auto svc = std::make_shared<FakeService>();
  FrameAuth rank0(munge(svc), true, -1), rank3(munge(svc), false, 3);
  ASSERT_TRUE(rank0.ok() && rank3.ok()) << rank3.error();
  EXPECT_STREQ(munge(svc).kind(), "munge");
  std::string e;
  ASSERT_TRUE(deliver(rank3, rank0.seal(FrameType::Hello, {}), &e)) << e;
  ASSERT_TRUE(deliver(rank0, rank3.seal(FrameType::Hello, {}), &e)) << e;
  EXPECT_EQ(rank0.rank(), 3) << "the credential binds the connection before any report";
  const auto report = deliver(rank0, rank3.seal(FrameType::Report, R"({"rank":3})"), &e);
  ASSERT_TRUE(report) << e;
  EXPECT_EQ(report->rank, 3);
  const auto verdict = deliver(rank3, rank0.seal(FrameType::Verdict, "{}"), &e);
  ASSERT_TRUE(verdict) << e;
  // Sealed frames carry a tag under the connection's key: one modified byte is refused.
  std::string bad = rank3.seal(FrameType::Results, "{}");
  bad[kHeaderBytes] ^= 1;
  EXPECT_FALSE(deliver(rank0, bad, &e));
  EXPECT_NE(e.find("authentication code does not match"), std::string::npos) << e;
}

// The rank's hello as a stranger would send it, after rank 0's.
std::optional<Frame> stranger_hello(FrameAuth& rank0, FrameAuth& stranger, std::string* e) {
  const std::string h0 = rank0.seal(FrameType::Hello, {});
  if (!deliver(stranger, h0, e)) return std::nullopt;
  return deliver(rank0, stranger.seal(FrameType::Hello, {}), e);
}

TEST(FrameAuthCredentials, AnotherJobsUsersOrConnectionsCredentialIsRefused) {
  const auto svc = std::make_shared<FakeService>();
  std::string e;
  {  // Another job of the same user.
    FrameAuth rank0(munge(svc, "4242"), true, -1), other(munge(svc, "4243"), false, 1);
    EXPECT_FALSE(stranger_hello(rank0, other, &e));
    EXPECT_NE(e.find("for job '4243', not for this job ('4242')"), std::string::npos) << e;
    EXPECT_EQ(rank0.rank(), -1);
  }
  {  // Another user: the service vouches for uid 1001.
    const auto theirs = std::make_shared<FakeService>(1001, 1001);
    FrameAuth rank0(munge(svc), true, -1), other(munge(theirs), false, 1);
    EXPECT_FALSE(stranger_hello(rank0, other, &e));
    EXPECT_NE(e.find("made by uid 1001, not by this job's user (uid 1000)"), std::string::npos) << e;
  }
  {  // A credential seen on the wire, replayed in a hello of the attacker's own (another nonce).
    FrameAuth rank0(munge(svc), true, -1), rank1(munge(svc), false, 1);
    std::string h1 = rank1.seal(FrameType::Hello, {});
    const auto fresh = std::make_shared<FakeService>();  // not yet opened by this service
    FrameAuth rank0b(munge(fresh), true, -1);
    std::string moved = h1;
    moved[kHeaderBytes + 1] ^= 1;  // the hello's nonce
    ASSERT_TRUE(deliver(rank1, rank0b.seal(FrameType::Hello, {}), &e)) << e;
    EXPECT_FALSE(deliver(rank0b, moved, &e));
    EXPECT_NE(e.find("made for another connection"), std::string::npos) << e;
    // The same hello again, whole: the service refuses a credential opened once.
    FrameAuth rank0c(munge(svc), true, -1);
    ASSERT_TRUE(deliver(rank0, h1, &e)) << e;
    EXPECT_FALSE(deliver(rank0c, h1, &e));
    EXPECT_NE(e.find("Replayed credential"), std::string::npos) << e;
  }
  {  // No credential, or junk in its place.
    FrameAuth rank0(munge(svc), true, -1), none(munge(svc), false, 1);
    std::string h = none.seal(FrameType::Hello, {});
    const std::string bare = h.substr(0, kHeaderBytes + 1 + kNonceBytes);
    std::string header = bare.substr(0, kHeaderBytes);
    header[15] = static_cast<char>(1 + kNonceBytes);
    EXPECT_FALSE(deliver(rank0, header + bare.substr(kHeaderBytes), &e));
    EXPECT_EQ(e, "a hello of the wrong size");
    FrameAuth rank0b(munge(svc), true, -1);
    std::string junk = h;
    junk[kHeaderBytes + 1 + kNonceBytes] = 'X';  // "CRED:" → "XRED:"
    EXPECT_FALSE(deliver(rank0b, junk, &e));
    EXPECT_NE(e.find("the rank's credential was refused (munge: Invalid credential format)"),
              std::string::npos)
        << e;
  }
}

TEST(FrameAuthCredentials, ACredentialBoundRankCannotSpeakForAnother) {
  const auto svc = std::make_shared<FakeService>();
  FrameAuth rank0(munge(svc), true, -1), rank1(munge(svc), false, 1);
  std::string e;
  ASSERT_TRUE(deliver(rank1, rank0.seal(FrameType::Hello, {}), &e)) << e;
  ASSERT_TRUE(deliver(rank0, rank1.seal(FrameType::Hello, {}), &e)) << e;
  std::string forged = rank1.seal(FrameType::Report, "{}");
  forged[11] = 2;  // the header's rank
  EXPECT_FALSE(deliver(rank0, forged, &e));
  EXPECT_EQ(e, "a frame for rank 2 on the connection of rank 1");
}

TEST(FrameAuthCredentials, MixedSecretsAreNamedAndAServiceThatIsDownSaysSo) {
  const auto svc = std::make_shared<FakeService>();
  std::string e;
  std::string token_error;
  const auto token = key_from_token("0123456789abcdef0123456789abcdef", &token_error);
  ASSERT_TRUE(token) << token_error;
  FrameAuth rank0(munge(svc), true, -1), with_token(*token, false, 1);
  EXPECT_FALSE(deliver(with_token, rank0.seal(FrameType::Hello, {}), &e));
  EXPECT_NE(
      e.find("rank 0 authenticates with launcher credentials (MUNGE) and this process with a job token"),
      std::string::npos)
      << e;
  FrameAuth rank0b(munge(svc), true, -1), keyless(std::nullopt, false, 1);
  EXPECT_FALSE(deliver(keyless, rank0b.seal(FrameType::Hello, {}), &e));
  EXPECT_NE(e.find("or make MUNGE work on this node"), std::string::npos) << e;

  const auto down = std::make_shared<FakeService>();
  down->down_ = true;
  FrameAuth rank1(munge(down), false, 1);
  EXPECT_FALSE(rank1.ok());
  EXPECT_EQ(rank1.error(), "munge: Failed to access socket");
  EXPECT_TRUE(rank1.seal(FrameType::Hello, {}).empty());
}

}  // namespace
}  // namespace railscope::preflight
