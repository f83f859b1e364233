// SPDX-License-Identifier: Apache-2.0
// Fuzzes what `railscope preflight` reads from another rank (tools/preflight/rendezvous.h: rank 0's port is
// reachable by anything on the network): the authenticated frame reader (tools/preflight/frame_auth.h),
// the frames' JSON as each side parses it, and rank 0's verdict built from a report it accepted.
//
// Input: byte 0 picks the reader (low 3 bits, modulo 6), the mode (bit 3: no job secret) and a tampering
// (bits 4-7 not 0: one bit of the sealed frame flipped, at (byte 1 * 256 + byte 2) modulo its size); byte 1
// is the step expected (its bit 7 also: with a secret, the key from rank 1's credential, as under MUNGE,
// not from a token), byte 2 the most results expected (0..64); the rest is a frame's payload. Readers 0-3:
// the payload is sealed by the sending end of a connection whose hellos were exchanged, opened by the
// receiving end (tampered or not) and parsed as the command parses it (json::parse without exceptions):
//   0  node_report_from_json, then the verdict rank 0 builds from the report: decide() with it as ranks 0
//      and 1 of 2, rendered as JSON (dump(), as the CLI prints it), as text and as rank 1's verdict line
//   1  tasks_from_json (a step, rank 0 -> a rank)
//   2  results_from_json (a step's results, a rank -> rank 0)
//   3  rank_summary (the verdict, rank 0 -> a rank)
//   4  the payload as raw bytes of a frame (header and body) at rank 0 after the hellos: with a secret
//      it never opens (no tag is forged); without one, what opens is read as a report
//   5  the payload as raw bytes of a rank's hello at rank 0
// Properties: no crash, exception or undefined behaviour on any payload; an untampered sealed frame opens
// with its payload and rank; with a secret a tampered one never does; what a reader accepts is within its
// documented bounds, and its wire form, sent (dump) and read back (parse), reads back the same.
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "frame_auth.h"
#include "link_plan.h"
#include "node_report.h"
#include "tests/fuzz/fuzz_check.h"
#include "verdict.h"

namespace rp = railscope::preflight;
using nlohmann::json;
using railscope::fuzz::Input;

namespace {

// As it travels: the text one side sends, parsed by the other.
json wire(const json& j) { return json::parse(j.dump()); }

void node_report(const json& j) {
  std::string error;
  const auto r = rp::node_report_from_json(j, &error);
  if (!r) {
    RS_FUZZ_CHECK(!error.empty(), "a refused report says why");
    return;
  }
  RS_FUZZ_CHECK(r->nics.size() <= rp::kMaxNics && r->nccl_env.size() <= rp::kMaxEnv &&
                    r->findings.size() <= rp::kMaxFindings && r->host.size() <= rp::kMaxField,
                "an accepted report is within its bounds");
  const json sent = rp::to_json(*r);
  const auto back = rp::node_report_from_json(wire(sent), &error);
  RS_FUZZ_CHECK(back && rp::to_json(*back) == sent, "an accepted report reads back the same: %s",
                error.c_str());
  rp::NodeReport zero = *r, one = *r;  // the report as rank 0's own and as rank 1's
  zero.rank = 0;
  one.rank = 1;
  const rp::Verdict v = rp::decide(2, "slurm", {zero, one}, {}, {}, 60);
  const std::string text = rp::to_json(v).dump(2);
  RS_FUZZ_CHECK(json::parse(text, nullptr, false).is_object(), "the verdict's JSON parses");
  (void)rp::to_text(v);
  std::string line;
  int code = -1;
  RS_FUZZ_CHECK(rp::rank_summary(wire(rp::rank_verdict(v, 1)), 1, one.host, &line, &code),
                "rank 1 reads the verdict rank 0 sends it");
  RS_FUZZ_CHECK(code >= 0 && code <= 2, "exit code %d", code);
}

void tasks(const json& j, int step) {
  std::string error;
  const auto t = rp::tasks_from_json(j, step, &error);
  if (!t) return;
  RS_FUZZ_CHECK(t->size() <= rp::kMaxNics, "%zu tasks", t->size());
  for (const auto& task : *t)
    RS_FUZZ_CHECK(task.step == step && task.oob_port != 0, "a task of step %d", step);
  const json sent = rp::tasks_to_json(step, *t);
  const auto back = rp::tasks_from_json(wire(sent), step, &error);
  RS_FUZZ_CHECK(back && rp::tasks_to_json(step, *back) == sent, "accepted tasks read back the same: %s",
                error.c_str());
}

void results(const json& j, int step, size_t max) {
  std::string error;
  const auto r = rp::results_from_json(j, step, max, &error);
  if (!r) return;
  RS_FUZZ_CHECK(r->size() <= max, "%zu results where %zu tasks were sent", r->size(), max);
  for (const auto& one : *r)
    RS_FUZZ_CHECK(std::isfinite(one.gbs) && std::isfinite(one.lat_us) && one.gbs >= 0 && one.lat_us >= 0,
                  "a result's numbers are finite and not negative");
  const json sent = rp::results_to_json(step, *r);
  const auto back = rp::results_from_json(wire(sent), step, max, &error);
  RS_FUZZ_CHECK(back && rp::results_to_json(step, *back) == sent, "accepted results read back the same: %s",
                error.c_str());
}

void verdict(const json& j) {
  std::string line;
  int code = -1;
  if (rp::rank_summary(j, 1, "hostB", &line, &code))
    RS_FUZZ_CHECK(code >= 0 && code <= 2 && !line.empty(), "exit code %d", code);
}

std::optional<rp::JobKey> job_key(bool authenticated) {
  if (!authenticated) return std::nullopt;
  std::string error;
  static const auto key = rp::key_from_token("fuzzing-job-token-0123456789", &error);
  RS_FUZZ_CHECK(key.has_value(), "the job key: %s", error.c_str());
  return key;
}

// A stand-in for MUNGE (job_credentials.h): a credential is its payload, vouched for this user; what
// the fuzzer reaches is what rank 0 does with a credential's payload.
class EchoCredentials final : public rp::CredentialService {
 public:
  const char* name() const override { return "munge"; }
  unsigned uid() const override { return 1000; }
  std::optional<std::string> seal(std::string_view payload, std::string*) const override {
    return std::string(payload);
  }
  std::optional<rp::OpenedCredential> open(std::string_view c, std::string*) const override {
    return rp::OpenedCredential{std::string(c), 1000};
  }
};

rp::JobSecret job_secret(bool authenticated, bool credentials) {
  if (!authenticated || !credentials) return job_key(authenticated);
  static const auto service = std::make_shared<EchoCredentials>();
  return rp::JobSecret(service, "fuzz-job");
}

// Rank 0's and rank 1's ends of one connection, hellos exchanged.
struct Connection {
  rp::FrameAuth rank0, rank1;
  Connection(bool authenticated, bool credentials)
      : rank0(job_secret(authenticated, credentials), true, -1, nonce(0xa0)),
        rank1(job_secret(authenticated, credentials), false, 1, nonce(0x51)) {
    std::string error;
    RS_FUZZ_CHECK(open(rank1, rank0.seal(rp::FrameType::Hello, {}), &error), "rank 0's hello: %s",
                  error.c_str());
    RS_FUZZ_CHECK(open(rank0, rank1.seal(rp::FrameType::Hello, {}), &error), "rank 1's hello: %s",
                  error.c_str());
  }
  static std::array<unsigned char, rp::kNonceBytes> nonce(unsigned char first) {
    std::array<unsigned char, rp::kNonceBytes> n{};
    for (size_t i = 0; i < n.size(); ++i) n[i] = static_cast<unsigned char>(first + i);
    return n;
  }
  // The reader's two calls, as rendezvous.cpp makes them: the header, then the body it asks for.
  static std::optional<rp::Frame> open(rp::FrameAuth& at, std::string_view bytes, std::string* error) {
    if (bytes.size() < rp::kHeaderBytes) return std::nullopt;
    const auto size = at.body_size(bytes.substr(0, rp::kHeaderBytes), error);
    if (!size || bytes.size() - rp::kHeaderBytes < *size) return std::nullopt;
    return at.open(bytes.substr(0, rp::kHeaderBytes), bytes.substr(rp::kHeaderBytes, *size), error);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  const uint8_t mode = in.u8();
  const int target = (mode & 7) % 6;
  const bool authenticated = !(mode & 8);
  const bool tamper = (mode >> 4) != 0;
  const int step = in.u8();
  const size_t max = in.u8() % 65;
  const auto rest = in.bytes(in.remaining());
  const std::string_view bytes(reinterpret_cast<const char*>(rest.data()), rest.size());
  const bool credentials = (step & 0x80) != 0;  // the key from rank 1's credential, not a token
  Connection c(authenticated, credentials);
  std::string error;
  std::optional<rp::Frame> frame;
  if (target == 5) {
    rp::FrameAuth fresh(job_secret(authenticated, credentials), true, -1, Connection::nonce(1));
    frame = Connection::open(fresh, bytes, &error);
    RS_FUZZ_CHECK(!frame || (frame->type == rp::FrameType::Hello && fresh.handshake_done()),
                  "only a hello opens before the handshake");
    return 0;
  }
  if (target == 4) {
    frame = Connection::open(c.rank0, bytes, &error);
    RS_FUZZ_CHECK(!frame || !authenticated, "a frame forged without the job's key opened");
    if (frame && frame->type != rp::FrameType::Hello) RS_FUZZ_CHECK(c.rank0.rank() == frame->rank, "bound");
  } else {
    static constexpr rp::FrameType kTypes[] = {rp::FrameType::Report, rp::FrameType::Step,
                                               rp::FrameType::Results, rp::FrameType::Verdict};
    const bool to_rank0 = target == 0 || target == 2;
    std::string sealed = (to_rank0 ? c.rank1 : c.rank0).seal(kTypes[target], bytes);
    // Rank 0 sends only once the connection is bound to its rank: by rank 1's credential in its hello,
    // else by its first report.
    if (!to_rank0 && authenticated && credentials)
      RS_FUZZ_CHECK(c.rank0.rank() == 1, "the credential bound the connection");
    if (!to_rank0 && !(authenticated && credentials)) {
      RS_FUZZ_CHECK(sealed.empty(), "rank 0 sealed a frame before the connection had a rank");
      const std::string report = c.rank1.seal(rp::FrameType::Report, "{}");
      RS_FUZZ_CHECK(Connection::open(c.rank0, report, &error) && c.rank0.rank() == 1, "bind: %s",
                    error.c_str());
      sealed = c.rank0.seal(kTypes[target], bytes);
    }
    if (sealed.empty()) {
      RS_FUZZ_CHECK(bytes.size() > rp::kMaxFrame, "a payload within the cap was not sealed");
      return 0;
    }
    if (tamper) {
      const size_t at = (static_cast<size_t>(step) * 256 + max) % sealed.size();
      sealed[at] = static_cast<char>(sealed[at] ^ (1 << (mode >> 4) % 8));
    }
    frame = Connection::open(to_rank0 ? c.rank0 : c.rank1, sealed, &error);
    if (!tamper)
      RS_FUZZ_CHECK(frame && frame->payload == bytes && frame->rank == 1 && frame->type == kTypes[target],
                    "an untampered frame opens as sealed: %s", error.c_str());
    else if (authenticated)
      RS_FUZZ_CHECK(!frame, "a tampered frame opened");
  }
  if (!frame || frame->type == rp::FrameType::Hello) return 0;
  const json j = json::parse(frame->payload, nullptr, false);
  if (j.is_discarded()) return 0;
  switch (target) {
    case 1: tasks(j, step); break;
    case 2: results(j, step, max); break;
    case 3: verdict(j); break;
    default: node_report(j); break;
  }
  return 0;
}
