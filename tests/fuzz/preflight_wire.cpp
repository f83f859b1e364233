// Fuzzes what `railscope preflight` reads from another rank (tools/preflight/rendezvous.h: rank 0's port is
// reachable by anything on the network): the frames' JSON as each side parses it, and rank 0's verdict built
// from a report it accepted.
//
// Input: byte 0 picks the reader, byte 1 is the step expected, byte 2 the most results expected (0..64);
// the rest is a frame's payload, parsed as the command parses it (json::parse without exceptions).
//   0  node_report_from_json, then the verdict rank 0 builds from the report: decide() with it as ranks 0
//      and 1 of 2, rendered as JSON (dump(), as the CLI prints it), as text and as rank 1's verdict line
//   1  tasks_from_json (a step, rank 0 -> a rank)
//   2  results_from_json (a step's results, a rank -> rank 0)
//   3  rank_summary (the verdict, rank 0 -> a rank)
// Properties: no crash, exception or undefined behaviour on any payload; what a reader accepts is within
// its documented bounds, and its wire form, sent (dump) and read back (parse), reads back the same.
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

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
  RS_FUZZ_CHECK(rp::rank_summary(wire(rp::rank_verdict(v, one.host)), 1, one.host, &line, &code),
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
    RS_FUZZ_CHECK(std::isfinite(one.GBps) && std::isfinite(one.lat_us) && one.GBps >= 0 && one.lat_us >= 0,
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  const int target = in.u8() % 4;
  const int step = in.u8();
  const size_t max = in.u8() % 65;
  const auto rest = in.bytes(in.remaining());
  const json j = json::parse(reinterpret_cast<const char*>(rest.data()),
                             reinterpret_cast<const char*>(rest.data()) + rest.size(), nullptr, false);
  if (j.is_discarded()) return 0;
  switch (target) {
    case 0: node_report(j); break;
    case 1: tasks(j, step); break;
    case 2: results(j, step, max); break;
    default: verdict(j); break;
  }
  return 0;
}
