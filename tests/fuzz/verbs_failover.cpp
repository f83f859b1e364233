// SPDX-License-Identifier: Apache-2.0
// Fuzzes what a peer controls when a verbs connection fails over (plugin/net/verbs/failover/,
// docs/failover.md): the failover notice's bytes, and the parts of large messages it sends again.
//
// Input: byte 0 gives the connection's QP count (1..64), byte 1 picks the target, the rest drive it:
//   0  decode(rest): a notice as it arrives
//   1  a PartLedger driven by the input (expect, a part by QP, a part by a replayed immediate), beside a
//      model of what it may accept
//   2  plan_replays over messages in flight from the input and a HELD notice decoded from the rest
// Properties: the decoder reads only the bytes it is given (a copy of exactly their size) and what it
// accepts is within its bounds and re-encodes byte for byte; the ledger takes each part of an awaited
// message at most once, completes a message only when every part came, and refuses anything for a
// message not awaited; a plan sends only parts of failed QPs that the receiver does not hold, each once,
// on a live QP.
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "plugin/net/verbs/failover/failover_message.h"
#include "plugin/net/verbs/failover/part_ledger.h"
#include "plugin/net/verbs/failover/replay_plan.h"
#include "tests/fuzz/fuzz_check.h"

namespace fo = railscope::net::verbs::failover;
using railscope::fuzz::Input;

namespace {

uint64_t all_of(size_t nqps) { return nqps >= 64 ? ~uint64_t{0} : (uint64_t{1} << nqps) - 1; }

void decode_notice(Input& in, size_t nqps) {
  const std::vector<std::byte> body = in.bytes(in.remaining());
  std::string why;
  const auto n = fo::decode(body, nqps, &why);
  if (!n) {
    RS_FUZZ_CHECK(!why.empty(), "a refused notice must say why");
    return;
  }
  RS_FUZZ_CHECK(n->epoch != 0 && n->qps != 0 && (n->qps & ~all_of(nqps)) == 0 && n->qps != all_of(nqps),
                "epoch %u QPs %#llx accepted for %zu QPs", n->epoch, static_cast<unsigned long long>(n->qps),
                nqps);
  RS_FUZZ_CHECK(n->held.size() <= fo::kMaxHeld, "%zu held", n->held.size());
  for (size_t i = 0; i < n->held.size(); ++i) {
    RS_FUZZ_CHECK(n->held[i].target < fo::kMaxHeld, "target %u", n->held[i].target);
    RS_FUZZ_CHECK((n->held[i].parts & ~all_of(nqps)) == 0, "parts outside the connection");
    RS_FUZZ_CHECK(i == 0 || n->held[i - 1].target < n->held[i].target, "targets out of order");
  }
  RS_FUZZ_CHECK(fo::encode(*n) == body, "the notice does not re-encode byte for byte");
}

void drive_ledger(Input& in) {
  fo::PartLedger ledger;
  struct Model {
    size_t nparts = 0;
    std::set<size_t> got;
  };
  std::map<uint16_t, Model> awaited;
  while (!in.empty()) {
    const uint8_t op = in.u8() % 3;
    const auto target = static_cast<uint16_t>(in.le(2) % 300);
    if (op == 0) {
      const uint32_t seq = static_cast<uint32_t>(in.le(4));
      const size_t nparts = in.u8() % 70;
      const bool ok = ledger.expect(target, seq, nparts);
      const bool may =
          target < fo::kMaxHeld && nparts >= 1 && nparts <= fo::kMaxQps && !awaited.contains(target);
      RS_FUZZ_CHECK(ok == may, "expect(%u, %zu) gave %d", target, nparts, ok);
      if (ok) awaited[target] = Model{nparts, {}};
      continue;
    }
    size_t part = 0;
    uint16_t t = target;
    if (op == 1) {
      part = in.u8() % 70;
    } else {
      const auto r = fo::replayed_part(static_cast<uint32_t>(in.le(4)));
      if (!r) continue;
      RS_FUZZ_CHECK(r->part < 64, "part %u", r->part);
      t = r->target;
      part = r->part;
    }
    const fo::Arrival a = ledger.arrive(t, part);
    auto it = awaited.find(t);
    const bool may = it != awaited.end() && part < it->second.nparts && !it->second.got.contains(part);
    RS_FUZZ_CHECK((a != fo::Arrival::Refused) == may, "part %zu of target %u: arrival %d", part, t,
                  static_cast<int>(a));
    if (!may) continue;
    it->second.got.insert(part);
    const bool whole = it->second.got.size() == it->second.nparts;
    RS_FUZZ_CHECK((a == fo::Arrival::Complete) == whole, "target %u complete=%d with %zu of %zu parts", t,
                  a == fo::Arrival::Complete, it->second.got.size(), it->second.nparts);
    if (whole) awaited.erase(it);
  }
  const std::vector<fo::PartsHeld> held = ledger.held();
  RS_FUZZ_CHECK(held.size() == awaited.size(), "%zu held, %zu awaited", held.size(), awaited.size());
}

void plan(Input& in, size_t nqps) {
  const uint64_t failed = in.le(8) & all_of(nqps);
  std::vector<fo::InFlight> flight(in.u8() % 40);
  std::map<uint16_t, size_t> nparts_of;
  for (auto& m : flight) {
    m.target = static_cast<uint16_t>(in.le(2) % 300);
    m.seq = static_cast<uint32_t>(in.u8() % 4);
    m.nparts = in.u8() % 70;
  }
  const std::vector<std::byte> body = in.bytes(in.remaining());
  std::string why;
  const auto held = fo::decode(body, nqps, &why);
  if (!held || held->kind != fo::Kind::Held) return;
  const auto replays = fo::plan_replays(flight, *held, failed, nqps);
  std::set<std::pair<uint16_t, uint8_t>> seen;
  for (const fo::Replay& r : replays) {
    RS_FUZZ_CHECK(r.on_qp < nqps && (failed & (uint64_t{1} << r.on_qp)) == 0, "replay on QP %u", r.on_qp);
    RS_FUZZ_CHECK(r.part < nqps, "part %u of a message of %zu QPs", r.part, nqps);
    RS_FUZZ_CHECK(seen.insert({r.target, r.part}).second, "part %u of target %u twice", r.part, r.target);
    bool held_it = false, awaited = false;
    for (const auto& p : held->held)
      if (p.target == r.target) {
        awaited = true;
        held_it = (p.parts & (uint64_t{1} << r.part)) != 0;
      }
    RS_FUZZ_CHECK(awaited && !held_it, "part %u of target %u: awaited %d held %d", r.part, r.target, awaited,
                  held_it);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  const size_t nqps = in.u8() % 64 + 1;
  const uint8_t target = in.u8() % 3;
  if (target == 0)
    decode_notice(in, nqps);
  else if (target == 1)
    drive_ledger(in);
  else
    plan(in, nqps);
  return 0;
}
