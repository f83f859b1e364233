// SPDX-License-Identifier: Apache-2.0
// Who may speak at the rendezvous. Every rank of one job holds the job's secret: a token from
// --token-file or RAILSCOPE_PREFLIGHT_TOKEN, or, under a launcher with a credential service (Slurm's
// MUNGE, job_credentials.h), a fresh key per connection that the rank's hello carries inside a credential
// only this user can open. Each connection starts with two hellos, each carrying a fresh random nonce,
// and every later frame carries HMAC-SHA256 under the key over (direction, sequence number, both nonces,
// the frame's header with its rank, the payload). A frame cannot then be forged without the secret,
// replayed on another connection or later on the same one, reordered, or moved between ranks or
// directions. Without a secret the frames carry no tag and the run is unauthenticated (rank 0 then
// listens on loopback unless told otherwise; see command.cpp).
// Pure: no sockets (rendezvous.h moves the bytes), so the fuzzer drives the same reader.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "job_credentials.h"

namespace railscope::preflight {

// "RSP3": frames with a rank and, with a secret, a tag; hellos that may carry a credential; an exchange
// per connection (Poll, Later).
constexpr uint32_t kFrameMagic = 0x52535033;
constexpr uint32_t kOldFrameMagic = 0x52535046;    // "RSPF": an older railscope's untagged frames
constexpr uint32_t kPriorFrameMagic = 0x52535032;  // "RSP2": one connection per rank, no credentials
constexpr uint32_t kMaxFrame = 256 * 1024;         // bytes of payload in one frame
constexpr size_t kHeaderBytes = 16;                // magic, type, rank, length (big-endian u32 each)
constexpr size_t kNonceBytes = 32;
constexpr size_t kTagBytes = 32;       // HMAC-SHA256
constexpr size_t kMinTokenBytes = 16;  // `openssl rand -hex 32` gives 64
constexpr size_t kMaxTokenBytes = 4096;
constexpr size_t kMaxCredentialBytes = 4096;  // a MUNGE credential of this payload is about 300
constexpr size_t kMaxJobIdBytes = 256;

// Each exchange is one connection: the hellos, one frame from the rank (Report, Results or Poll: "my next
// message"), one from rank 0 (Step, Verdict or Later: "come back in N ms", docs/preflight.md "Scale").
enum class FrameType : uint32_t {
  Report = 1,
  Verdict = 2,
  Step = 3,
  Results = 4,
  Hello = 5,
  Poll = 6,
  Later = 7
};

struct Frame {
  FrameType type = FrameType::Report;
  int rank = 0;  // the rank the frame is from (to rank 0) or for (from rank 0)
  std::string payload;
};

// The key both ends derive from the job's token (HMAC-SHA256 of a fixed label under the token).
struct JobKey {
  std::array<unsigned char, 32> bytes{};
};

// What this process authenticates with: a token's key, a credential service, or nothing. Converts from
// the token's key so that `FrameAuth(key, …)` reads as before.
struct JobSecret {
  std::optional<JobKey> token;
  std::shared_ptr<const CredentialService> credentials;
  std::string job;  // the launcher's job id, inside each credential: another job's credential is refused

  JobSecret() = default;
  JobSecret(std::nullopt_t) {}
  JobSecret(const JobKey& k) : token(k) {}
  JobSecret(std::optional<JobKey> k) : token(std::move(k)) {}
  JobSecret(std::shared_ptr<const CredentialService> service, std::string job_id)
      : credentials(std::move(service)), job(std::move(job_id)) {}

  bool has_value() const { return token.has_value() || credentials != nullptr; }
  explicit operator bool() const { return has_value(); }
  // "token", "munge" (the service's name) or "none", for the verdict and errors.
  const char* kind() const { return token ? "token" : credentials ? credentials->name() : "none"; }
};

// The token's text with trailing whitespace removed (a file written by `openssl rand -hex 32 > FILE` or
// a Kubernetes Secret's value ends in a newline); nullopt with *error when it is shorter than
// kMinTokenBytes or longer than kMaxTokenBytes.
std::optional<JobKey> key_from_token(std::string_view token, std::string* error);
// The token in `path`: opened read-only without following a FIFO or a terminal, then checked on the
// opened file (no race with a rename): a regular file of at most kMaxTokenBytes, owned by this user or
// root, neither readable nor writable by group or others (as ssh checks a private key). Symbolic links
// are followed: a Kubernetes Secret volume's files are links into its `..data` folder.
std::optional<JobKey> key_from_file(const std::string& path, std::string* error);

// One connection's frames at one end. Rank 0 holds one per connection, a rank one for its connection to
// rank 0. The first frame each way is a Hello (this end's nonce and whether it holds a secret); every
// later frame is sealed and opened here.
class FrameAuth {
 public:
  // secret: the job's (none: unauthenticated). at_rank0: which end this is. rank: at a rank its own; at
  // rank 0 -1 until the peer's credential or first sealed frame binds the connection to its rank.
  // The nonce (and with a credential service, the connection's key and the credential carrying it) is
  // made here; ok() is false when that failed, error() says why.
  FrameAuth(JobSecret secret, bool at_rank0, int rank);
  // For tests and the fuzzer: this end's nonce given.
  FrameAuth(JobSecret secret, bool at_rank0, int rank, const std::array<unsigned char, kNonceBytes>& nonce);

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  bool authenticated() const { return secret_.has_value(); }
  bool at_rank0() const { return at_rank0_; }
  // The peer's rank (at rank 0: -1 before the first sealed frame), or this rank (at a rank).
  int rank() const { return rank_; }
  bool handshake_done() const { return peer_nonce_.has_value(); }

  // The whole frame to send: header, payload, tag. One Hello first; any other type once both hellos
  // went (else an empty string).
  std::string seal(FrameType type, std::string_view payload);

  // The bytes that follow a header (payload and tag); nullopt with *error for a bad magic, an unknown
  // type or a length over kMaxFrame.
  std::optional<size_t> body_size(std::string_view header, std::string* error) const;
  // The frame whose header and body were read: its hello (the peer's nonce and mode taken), or a
  // sealed frame whose tag matches and whose rank is the connection's. nullopt with *error otherwise;
  // after a refusal the connection is to be dropped.
  std::optional<Frame> open(std::string_view header, std::string_view body, std::string* error);

 private:
  std::string tag(bool from_rank0, uint64_t seq, std::string_view header, std::string_view payload) const;
  void make_credential();
  bool open_credential(std::string_view credential, const std::array<unsigned char, kNonceBytes>& nonce,
                       std::string* error);

  JobSecret secret_;
  std::optional<JobKey> key_;  // the token's, or this connection's from the credential
  std::string credential_;     // at a rank with a credential service: sent in its hello
  std::string error_;
  bool at_rank0_;
  int rank_;
  bool ok_ = true;
  bool hello_sent_ = false;
  std::array<unsigned char, kNonceBytes> nonce_{};
  std::optional<std::array<unsigned char, kNonceBytes>> peer_nonce_;
  uint64_t send_seq_ = 0;
  uint64_t recv_seq_ = 0;
};

}  // namespace railscope::preflight
