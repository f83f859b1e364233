// SPDX-License-Identifier: Apache-2.0
// The `railscope preflight` subcommand: this node's doctor checks, the rendezvous at rank 0, the verdict.
#include <spdlog/spdlog.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdlib>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <thread>

#include "frame_auth.h"
#include "html_page.h"
#include "launch_env.h"
#include "link_runner.h"
#include "link_steps.h"
#include "munge_credentials.h"
#include "node_summary.h"
#include "open_files.h"
#include "railscope/cli/exit_status.h"
#include "railscope/cli/logging.h"
#include "railscope/cli/output_file.h"
#include "railscope/cli/size.h"
#include "railscope/core/params.h"
#include "railscope/core/safe_file.h"
#include "rank0_desk.h"
#include "rendezvous.h"
#include "step_progress.h"
#include "verdict.h"

namespace railscope::cli {
namespace {

using namespace railscope::preflight;
using nlohmann::json;

struct Options {
  std::optional<int> rank;
  std::optional<int> world;
  std::string rendezvous;
  std::string k8s_service;
  std::string host_name;
  std::string bind;
  std::string token_file;
  bool unauthenticated = false;  // --unauthenticated: no secret, and rank 0 may listen beyond loopback
  JobSecret key;                 // the job's: --token-file, RAILSCOPE_PREFLIGHT_TOKEN, or under Slurm MUNGE
  std::string no_secret_why;     // why MUNGE was not used under Slurm, for the "unauthenticated" line
  int timeout_s = 60;
  bool json = false;
  std::string html;  // rank 0 writes the HTML page here
  bool no_verbs = false;
  std::string sysfs_root;
  bool no_links = false;
  bool full = false;
  bool no_latency = false;
  bool no_counters = false;
  LinkOptions link;
  LinkPolicy policy;
  double line_rate_GBps = 0;  // 0 = each NIC's reported rate
};

std::string wire(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string this_host() {
  char h[256] = {};
  if (::gethostname(h, sizeof h - 1) != 0) return "unknown";
  return h;
}

void out(const std::string& s) {
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
}

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "railscope preflight: %s (usage error, exit %d)\n", msg.c_str(), kExitUsage);
  throw CLI::RuntimeError(kExitUsage);
}

// The page goes to a unique temporary file renamed into place (railscope/core/safe_file.h), so a reader
// never sees half a page and a link planted at the name is never written through; a failure is one line
// on stderr (the verdict and the exit status stand).
void write_html(const std::string& path, const std::string& page) {
  std::string why;
  if (!core::write_file_atomically(path, page, &why))
    spdlog::warn("preflight: cannot write the HTML page: {}", why);
}

// What rank 0 says about the connections that never became a rank: one line each on stderr (the first 64),
// and one finding at info severity for all of them (the first 8 named).
struct DroppedConnections {
  size_t count = 0;
  std::string first;

  void add(const std::string& peer, const std::string& why) {
    if (++count <= 64) spdlog::warn("preflight: dropped a connection from {}: {} (not a rank)", peer, why);
    if (count <= 8) first += fmt::format("{}{} ({})", first.empty() ? "" : ", ", peer, why);
  }
  std::optional<diag::Finding> finding() const {
    if (count == 0) return std::nullopt;
    return diag::make(
        "preflight.connection_dropped",
        fmt::format("{} connection(s) to rank 0's port sent no node report and were closed: {}{}", count,
                    first, count > 8 ? ", …" : ""));
  }
};

// A rank's next message: a frame type and its payload.
using Message = std::pair<FrameType, std::string>;

// Rank 0 while it serves the other ranks' exchanges (rank0_desk.h).
struct Rank0 {
  int world;
  Desk desk;
  std::vector<int> index;  // by rank: its report's index in the nodes, -1 before it joined
  DroppedConnections dropped;
};

// Serves callers until `done()` or `until`. First every held rank whose next message `reply` has gets it;
// then each caller's frame goes to `take` (false: refused, closed) and it gets its next message at once,
// or waits for it (held, or told to come back). `failed`: a message that could not be delivered.
void serve(Rank0& z, Clock::time_point until, const std::function<bool()>& done,
           const std::function<bool(Caller&)>& take, const std::function<std::optional<Message>(int)>& reply,
           const std::function<void(int, const std::string&)>& failed) {
  std::string error;
  const auto deliver = [&](int rank, Caller& c, const Message& m) {
    if (!Desk::answer(c, m.first, m.second, &error)) failed(rank, error);
  };
  std::map<int, Message> ready;
  for (auto& [rank, c] : z.desk.release([&](int r) {
         auto m = reply(r);
         if (m) ready.emplace(r, std::move(*m));
         return m.has_value();
       }))
    deliver(rank, c, ready[rank]);
  while (!done() && Clock::now() < until) {
    // Short accepts: done() is checked between them.
    auto c = z.desk.next(std::min(until, Clock::now() + std::chrono::milliseconds(100)), until);
    if (!c) continue;
    // Anything short of a well-formed frame (a port scanner, a health check, a stranger without the
    // job's secret) never was a rank: logged, counted, no error of the cluster.
    if (!c->frame) {
      z.dropped.add(c->peer, c->error);
      continue;
    }
    if (!take(*c)) continue;
    const int rank = c->frame->rank;
    if (auto m = reply(rank))
      deliver(rank, *c, *m);
    else
      z.desk.hold_or_defer(rank, std::move(*c));
  }
}

// A caller's frame after the reports: a joined rank's poll or results; anything else is refused.
bool from_joined_rank(Rank0& z, const Caller& c) {
  const Frame& f = *c.frame;
  std::string why;
  if (f.type == FrameType::Report)
    why = f.rank > 0 && f.rank < z.world && z.index[size_t(f.rank)] >= 0
              ? fmt::format("rank {} joined twice (the launcher gave two processes the same rank)", f.rank)
              : fmt::format("rank {} reported after rank 0 stopped waiting (--timeout)", f.rank);
  else if (f.type != FrameType::Poll && f.type != FrameType::Results)
    why = "expected a poll or step results";
  else if (f.rank <= 0 || f.rank >= z.world || z.index[size_t(f.rank)] < 0)
    why = fmt::format("rank {} did not join", f.rank);
  if (why.empty()) return true;
  spdlog::warn("preflight: refused a connection from {}: {}", c.peer, why);
  return false;
}

// Rank 0 drives the link steps: each step's tasks to every rank (an empty list keeps a rank in step),
// its own tasks run here meanwhile, then every rank's results. A rank that does not take or answer a step
// is lost: it gets no more steps, and the later tasks with it, its peers' and rank 0's own, fail at once
// with the reason (link_steps.h).
std::vector<LinkMeasurement> measure_links(const Options& o, const Launch& l,
                                           const std::vector<NodeReport>& nodes, Rank0& z,
                                           std::vector<diag::Finding>* lost_findings_out,
                                           std::vector<std::vector<int>>* lost_ranks_out) {
  const LinkPlan plan = plan_links(nodes, o.full, !o.no_latency, l.port);
  std::vector<std::vector<TaskResult>> results(nodes.size());  // per node, in task order
  LostRanks lost(nodes.size());
  const auto lose = [&](size_t k, int step, const std::string& why) {
    if (lost.lost_by(k, step)) return;
    lost.lose(k, step, fmt::format("rank {} ({}) {}", nodes[k].rank, nodes[k].host, why));
    spdlog::warn("preflight: {}", lost.reason(k));
  };
  const auto k_of = [&](int rank) { return size_t(z.index[size_t(rank)]); };
  // A rank that polls between steps waits up to one come-back interval more for its step.
  const auto come_back = std::chrono::milliseconds(z.desk.come_back_ms());
  // A link is one client's bandwidth task (latency rides along on the same pair).
  const auto links_in = [&](int step) {
    int n = 0;
    for (const auto& tasks : plan.tasks)
      for (const auto& t : tasks)
        n += (!t.server && t.measure == Measure::Bandwidth && (step < 0 || t.step == step));
    return n;
  };
  StepProgress progress(plan.steps, links_in(-1));
  for (int step = 0; step < plan.steps; ++step) {
    progress.start_step(step);
    std::vector<std::vector<LinkTask>> now(nodes.size());
    std::vector<std::vector<LinkTask>> run(nodes.size());
    for (size_t k = 0; k < nodes.size(); ++k) {
      for (const auto& t : plan.tasks[k])
        if (t.step == step) now[k].push_back(t);
      run[k] = runnable(now[k], lost, step);
    }
    std::vector<char> given(nodes.size(), 0);
    std::vector<std::optional<std::vector<TaskResult>>> got(nodes.size());
    size_t waiting = 0;  // ranks not lost whose results are not in
    for (size_t k = 0; k < nodes.size(); ++k)
      if (nodes[k].rank != 0 && !lost.lost_by(k, step)) ++waiting;
    const auto started = Clock::now();
    const auto send_by = started + std::chrono::seconds(10) + come_back;
    const auto answer_by = started + std::chrono::seconds(o.link.timeout_s + 70) + come_back;
    std::optional<std::vector<TaskResult>> mine;
    std::atomic<bool> mine_done = false;
    std::thread own([&] {
      for (size_t k = 0; k < nodes.size(); ++k)
        if (nodes[k].rank == 0) mine = run_tasks(run[k], o.link);
      mine_done = true;
    });
    std::string error;
    const auto take = [&](Caller& c) {
      if (!from_joined_rank(z, c)) return false;
      const size_t k = k_of(c.frame->rank);
      if (c.frame->type != FrameType::Results || !given[k] || got[k] || lost.lost_by(k, step)) return true;
      const json j = json::parse(c.frame->payload, nullptr, false);
      auto r = results_from_json(j, step, run[k].size(), &error);
      if (r && r->size() != run[k].size()) r.reset(), error = "fewer results than tasks";
      if (r)
        got[k] = std::move(r);
      else
        lose(k, step, fmt::format("did not answer step {}: {}", step, error));
      --waiting;
      return true;
    };
    const auto reply = [&](int rank) -> std::optional<Message> {
      const size_t k = k_of(rank);
      if (given[k] || lost.lost_by(k, step) || Clock::now() > send_by) return std::nullopt;
      given[k] = 1;
      return Message{FrameType::Step, wire(tasks_to_json(step, run[k]))};
    };
    const auto failed = [&](int rank, const std::string& why) {
      const size_t k = k_of(rank);
      if (!got[k] && !lost.lost_by(k, step)) --waiting;
      lose(k, step, "is gone: " + why);
    };
    bool swept = false;  // the ranks that had not taken the step by send_by are lost
    const auto done = [&] {
      if (!swept && Clock::now() > send_by) {
        swept = true;
        for (size_t k = 0; k < nodes.size(); ++k)
          if (nodes[k].rank != 0 && !given[k] && !lost.lost_by(k, step)) {
            lose(k, step, fmt::format("did not take step {}: no poll by the deadline", step));
            --waiting;
          }
      }
      progress.tick();
      return waiting == 0 && mine_done;
    };
    serve(z, answer_by, done, take, reply, failed);
    own.join();
    progress.end_step(links_in(step));
    for (size_t k = 0; k < nodes.size(); ++k) {
      if (nodes[k].rank == 0) {
        got[k] = mine;
      } else if (!got[k] && !lost.lost_by(k, step)) {
        lose(k, step,
             given[k] ? fmt::format("did not answer step {}: timed out", step)
                      : fmt::format("did not take step {}: no poll by the deadline", step));
      }
      for (auto& r : step_results(k, now[k], got[k], lost, step)) results[k].push_back(std::move(r));
    }
  }
  *lost_findings_out = lost_findings(plan, nodes, lost);
  for (size_t k = 0; k < nodes.size(); ++k)
    if (lost.lost_by(k, INT_MAX - 1)) lost_ranks_out->push_back({nodes[k].rank});
  return links_from_results(plan, nodes, results, lost, o.line_rate_GBps);
}

// The reports: until every rank joined or --timeout. A rank's report is its first exchange; it then
// waits for its first step or the verdict.
std::vector<NodeReport> join(Rank0& z, NodeReport mine, Clock::time_point deadline,
                             std::vector<diag::Finding>* refused) {
  std::vector<NodeReport> nodes{std::move(mine)};
  z.index.assign(size_t(z.world), -1);
  z.index[0] = 0;
  std::string error;
  const auto take = [&](Caller& c) {
    const Frame& f = *c.frame;
    if (f.type != FrameType::Report) return from_joined_rank(z, c);
    std::optional<NodeReport> r;
    const json j = json::parse(f.payload, nullptr, false);
    if (j.is_discarded())
      error = "the report is not JSON";
    else
      r = node_report_from_json(j, &error);
    if (!r) {
      z.dropped.add(c.peer, error);
      return false;
    }
    // A well-formed report for a rank that cannot be is a launch gone wrong.
    if (r->rank <= 0 || r->rank >= z.world)
      error =
          fmt::format("rank {} is outside 1..{} (another job, or another world size?)", r->rank, z.world - 1);
    else if (r->rank != f.rank)
      error = fmt::format("the report says rank {}, its frame rank {}", r->rank, f.rank);
    else if (z.index[size_t(r->rank)] >= 0)
      error = fmt::format("rank {} joined twice (the launcher gave two processes the same rank)", r->rank);
    else
      error.clear();
    if (!error.empty()) {
      spdlog::warn("preflight: refused a connection from {}: {}", c.peer, error);
      if (refused->size() < 64)
        refused->push_back(diag::make("preflight.node_refused", c.peer + ": " + error));
      return false;
    }
    z.index[size_t(r->rank)] = static_cast<int>(nodes.size());
    nodes.push_back(std::move(*r));
    return true;
  };
  serve(
      z, deadline, [&] { return nodes.size() >= size_t(z.world); }, take,
      [](int) { return std::optional<Message>(); }, [](int, const std::string&) {});
  return nodes;
}

// Rank 0: collect every other rank's report until all joined or --timeout, decide, answer each rank.
int run_rank0(const Options& o, const Launch& l, NodeReport mine) {
  std::string error;
  const OpenFiles files = raise_open_files();
  // Without the job's secret anything that reaches the port could speak for a rank: loopback only,
  // unless --unauthenticated says the network is trusted.
  const bool loopback_only = !o.key && !o.unauthenticated;
  Fd lfd = listen_on(o.bind.empty() && loopback_only ? "127.0.0.1" : o.bind, l.port, &error);
  if (!lfd) usage_error(error);
  if (loopback_only && !on_loopback(lfd.get(), true))
    usage_error("--bind " + o.bind +
                " is not a loopback address and there is no job secret: give --token-file FILE or "
                "RAILSCOPE_PREFLIGHT_TOKEN on every rank, or --unauthenticated on a trusted network");
  if (!o.key && l.world > 1)
    spdlog::warn(
        "preflight: no job secret (--token-file FILE or RAILSCOPE_PREFLIGHT_TOKEN{}): this run is "
        "unauthenticated, anything that reaches port {} can speak for a rank{}",
        o.no_secret_why, l.port,
        loopback_only ? "; listening on loopback only (--unauthenticated: beyond)" : "");
  // Found out now rather than after the links: the page's place must be writable.
  if (!o.html.empty()) require_writable_output("railscope preflight", "--html", o.html);
  const auto deadline = Clock::now() + std::chrono::seconds(o.timeout_s);
  // Held connections fit beside rank 0's own descriptors; the ranks beyond poll (rank0_desk.h).
  const size_t max_held = std::min(kMaxHeldCallers, connection_capacity(files));
  const size_t others = static_cast<size_t>(l.world) - 1;
  Rank0 z{l.world,
          Desk(lfd.get(), o.key, max_held, come_back_ms_for(others - std::min(others, max_held))),
          {},
          {}};
  std::vector<diag::Finding> refused;
  std::vector<NodeReport> nodes = join(z, std::move(mine), deadline, &refused);
  if (z.desk.closed_for_want_of_files() > 0) {
    const std::string detail = fmt::format(
        "rank 0 ran out of open files (limit {}, hard limit {}) and closed {} connection(s) it could not "
        "take",
        files.soft, files.hard, z.desk.closed_for_want_of_files());
    spdlog::warn("preflight: {}", detail);
    refused.push_back(diag::make("preflight.open_files", detail));
  }
  if (auto f = z.dropped.finding()) refused.push_back(std::move(*f));
  std::vector<int> missing;
  for (int i = 1; i < l.world; ++i)
    if (z.index[size_t(i)] < 0) missing.push_back(i);
  Verdict v =
      decide(l.world, l.source, std::move(nodes), std::move(missing), std::move(refused), o.timeout_s);
  v.authenticated = o.key.has_value();
  v.authentication = o.key.kind();
  // decide() keeps the reports but may order them anew.
  for (size_t k = 0; k < v.nodes.size(); ++k) z.index[size_t(v.nodes[k].rank)] = static_cast<int>(k);
  if (!o.no_links && v.nodes.size() >= 2) {
    std::vector<diag::Finding> lost;
    std::vector<std::vector<int>> lost_ranks;
    add_links(&v, measure_links(o, l, v.nodes, z, &lost, &lost_ranks), o.policy);
    add_findings(&v, std::move(lost), std::move(lost_ranks));
  }
  out(o.json ? to_json(v).dump(2, ' ', false, json::error_handler_t::replace) + "\n" : to_text(v));
  if (!o.html.empty()) write_html(o.html, render_html(v));
  std::vector<char> sent(size_t(l.world), 0);
  size_t unsent = v.nodes.size() - 1;
  const auto take = [&](Caller& c) { return from_joined_rank(z, c); };
  const auto reply = [&](int rank) -> std::optional<Message> {
    if (sent[size_t(rank)]) return std::nullopt;
    sent[size_t(rank)] = 1;
    --unsent;
    return Message{FrameType::Verdict, wire(rank_verdict(v, rank))};
  };
  const auto failed = [&](int rank, const std::string& why) {
    const auto& n = v.nodes[size_t(z.index[size_t(rank)])];
    spdlog::warn("preflight: could not send the verdict to rank {} ({}): {}", rank, n.host, why);
  };
  serve(
      z, Clock::now() + std::chrono::seconds(10) + std::chrono::milliseconds(z.desk.come_back_ms()),
      [&] { return unsent == 0; }, take, reply, failed);
  for (const auto& n : v.nodes)
    if (n.rank != 0 && !sent[size_t(n.rank)])
      spdlog::warn("preflight: could not send the verdict to rank {} ({}): it did not poll", n.rank, n.host);
  return v.exit_code;
}

// Any other rank: send the report, take the link steps, wait for the verdict, print one line. Each
// exchange is one connection (rank0_desk.h): this rank sends a frame, rank 0 answers with the next
// message or asks it to come back later.
int run_rank(const Options& o, const Launch& l, const NodeReport& mine) {
  std::string error;
  const auto fail = [&](const char* what) {
    std::fprintf(stderr, "railscope preflight: rank %d (%s): %s%s\n", l.rank, mine.host.c_str(), what,
                 error.c_str());
    return 2;
  };
  // Rank 0 may start up to --timeout later, then waits up to --timeout for the others; between later
  // messages it runs a step.
  auto until = Clock::now() + std::chrono::seconds(2 * o.timeout_s + o.link.timeout_s + 90);
  FrameType type = FrameType::Report;
  std::string payload = wire(to_json(mine));
  for (bool first = true;; first = false) {
    Fd c = connect_until(l.host, l.port, first ? Clock::now() + std::chrono::seconds(o.timeout_s) : until,
                         &error);
    if (first && c && !o.key && !o.unauthenticated && !on_loopback(c.get(), false)) {
      std::fprintf(stderr,
                   "railscope preflight: rank %d (%s): rank 0 at %s is not on loopback and there is no job "
                   "secret: give --token-file FILE or RAILSCOPE_PREFLIGHT_TOKEN on every rank, or "
                   "--unauthenticated on a trusted network\n",
                   l.rank, mine.host.c_str(), l.host.c_str());
      return 2;
    }
    if (first && c && !o.key)
      spdlog::warn(
          "preflight: rank {}: no job secret (--token-file FILE or RAILSCOPE_PREFLIGHT_TOKEN{}): this run is "
          "unauthenticated",
          l.rank, o.no_secret_why);
    FrameAuth auth(o.key, false, l.rank);
    if (!c || !exchange_hellos(c.get(), auth, until, &error) ||
        !send_frame(c.get(), auth, type, payload, until, &error))
      return fail(first ? "" : "lost rank 0: ");
    const auto frame = receive_frame(c.get(), auth, until, &error);
    c = Fd();
    if (frame && frame->type == FrameType::Later) {
      const auto wait = std::chrono::milliseconds(come_back_ms_from(frame->payload));
      if (Clock::now() + wait >= until) return error = "timed out", fail("no verdict from rank 0: ");
      std::this_thread::sleep_for(wait);
      type = FrameType::Poll;
      payload = "{}";
      continue;
    }
    if (frame && frame->type == FrameType::Step) {
      const json j = json::parse(frame->payload, nullptr, false);
      const int step = j.is_object() && j.contains("step") && j["step"].is_number_integer()
                           ? static_cast<int>(std::clamp<int64_t>(j["step"].get<int64_t>(), 0, 1 << 30))
                           : -1;
      const auto tasks = tasks_from_json(j, step, &error);
      if (!tasks) return fail("refused a step from rank 0: ");
      type = FrameType::Results;
      payload = wire(results_to_json(step, run_tasks(*tasks, o.link)));
      until = Clock::now() + std::chrono::seconds(2 * o.timeout_s + o.link.timeout_s + 90);
      continue;
    }
    std::string line;
    int code = 2;
    const json j = frame ? json::parse(frame->payload, nullptr, false) : json();
    if (frame && frame->type == FrameType::Verdict && rank_summary(j, l.rank, mine.host, &line, &code)) {
      out(line + "\n");
      return code;
    }
    std::fprintf(stderr, "railscope preflight: rank %d (%s): no verdict from rank 0 at %s:%u: %s%s\n", l.rank,
                 mine.host.c_str(), l.host.c_str(), l.port, frame ? "not a verdict" : error.c_str(),
                 !frame && o.key && error == "connection closed"
                     ? " (rank 0 refused this rank: does it hold the same job secret? its stderr says why)"
                     : "");
    return 2;
  }
}

}  // namespace

void add_preflight(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "preflight",
      "The whole cluster checked before a job: started once per node by the cluster's launcher (srun, "
      "mpirun, "
      "torchrun-style env, Kubernetes Indexed Job); every node runs the doctor checks, rank 0 compares them "
      "rail by rail and prints the verdict. Exit 0 ok, 1 warnings, 2 a node or link that will slow or fail "
      "the job; 64 a usage error, 73 --html cannot be written");
  cmd->add_option("--rank", o->rank, "This process's rank (overrides the launcher's)")
      ->check(CLI::Range(0, kMaxWorld - 1));
  cmd->add_option("--world-size", o->world, "Number of processes (overrides the launcher's)")
      ->check(CLI::Range(1, kMaxWorld));
  cmd->add_option("--rendezvous", o->rendezvous,
                  "Rank 0's HOST[:PORT] (default port 29555; else MASTER_ADDR/MASTER_PORT)");
  cmd->add_option("--k8s-service", o->k8s_service,
                  "Indexed Job: the headless service; rank 0 is <job-name>-0.<service>");
  cmd->add_option("--host-name", o->host_name,
                  "The name this node is reported under (default: the hostname)");
  cmd->add_option("--bind", o->bind,
                  "Rank 0: the address to listen on (default: every address with a job secret or "
                  "--unauthenticated, else 127.0.0.1)");
  cmd->add_option("--token-file", o->token_file,
                  "The job's secret, the same on every rank (mode 600 or stricter; overrides "
                  "RAILSCOPE_PREFLIGHT_TOKEN): every rendezvous frame is authenticated with it");
  cmd->add_flag("--unauthenticated", o->unauthenticated,
                "Run without a job secret beyond loopback: anything that reaches rank 0's port can speak "
                "for a rank (a trusted network only)");
  cmd->add_option("--timeout", o->timeout_s, "Seconds rank 0 waits for the others (and they for rank 0)")
      ->check(CLI::Range(1, 86400));
  cmd->add_flag("--json", o->json, "Rank 0 prints the verdict as JSON (docs/preflight.md)");
  cmd->add_option("--html", o->html,
                  "Rank 0 also writes the verdict as one self-contained HTML page: a node x node heat map "
                  "of the links per rail, the findings");
  cmd->add_option("--sysfs-root", o->sysfs_root,
                  "Doctor: read sysfs from DIR (tests); libibverbs is then not queried");
  cmd->add_flag("--no-verbs", o->no_verbs, "Doctor: do not query libibverbs (sysfs only)");
  cmd->add_flag("--no-links", o->no_links, "Do not measure links (consistency only)");
  cmd->add_flag("--full", o->full, "Measure every pair of nodes (N-1 rounds) instead of O(log N) rounds");
  cmd->add_flag("--no-latency", o->no_latency, "Measure bandwidth only");
  cmd->add_flag("--no-counters", o->no_counters, "Do not sample the ports' counters around each link test");
  cmd->add_option("--plugin", o->link.plugin,
                  "Net plugin for the links (netbench --plugin; default railscope's)");
  add_size_option(cmd, "--link-size", o->link.size,
                  "Bandwidth message size, a power of two, 1 to 1G, default 4M", uint64_t(1) << 30, 1);
  add_size_option(cmd, "--link-bytes", o->link.bytes,
                  "Bytes per bandwidth measurement (netbench --bytes-per-size), 4K to 1T, default 256M",
                  uint64_t(1) << 40, uint64_t(1) << 12);
  cmd->add_option("--link-timeout", o->link.timeout_s, "Seconds one measurement may take")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  cmd->add_option(
         "--link-poll", o->link.poll,
         "What a waiting netbench does: yield (as NCCL's proxy thread), spin, sleep (leaves the CPU to a "
         "transport that needs it: soft-RoCE)")
      ->check(CLI::IsMember({"yield", "spin", "sleep"}))
      ->capture_default_str();
  cmd->add_option("--line-rate-GBps", o->line_rate_GBps,
                  "Line rate every link is compared with, GB/s (default: each NIC's reported rate)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--min-line-percent", o->policy.min_line_percent,
                  "A link below this % of line rate is slow (0 = off)")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--slow-fraction", o->policy.slow_fraction_of_median,
                  "A link below this fraction of its rail's median is slow")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();

  cmd->callback([o] {
    LaunchFlags flags;
    flags.rank = o->rank;
    flags.world = o->world;
    flags.rendezvous = o->rendezvous;
    flags.k8s_service = o->k8s_service;
    flags.own_hostname = this_host();
    // The launchers' own variables (not railscope's: not in the params registry, whose names are NCCL_*
    // and RAILSCOPE_*); docs/preflight.md lists them.
    const Env env = [](std::string_view name) { return params::raw(name); };
    std::string error;
    // netbench measures powers of two only: any other size would leave every link unmeasured.
    if ((o->link.size & (o->link.size - 1)) != 0)
      usage_error(fmt::format("--link-size {} is not a power of two (netbench measures powers of two)",
                              o->link.size));
    if (!o->token_file.empty()) {
      o->key = key_from_file(o->token_file, &error);
      if (!o->key) usage_error(error);
    } else if (const auto token = params::raw("RAILSCOPE_PREFLIGHT_TOKEN")) {
      o->key = key_from_token(*token, &error);
      if (!o->key) usage_error("RAILSCOPE_PREFLIGHT_TOKEN: " + error);
    }
    ::unsetenv("RAILSCOPE_PREFLIGHT_TOKEN");  // not inherited by the netbench children
    // Under Slurm without a token, MUNGE (which Slurm itself authenticates with) vouches for each rank.
    if (!o->key && !o->unauthenticated)
      if (const auto job = params::raw("SLURM_JOB_ID"); job && !job->empty()) {
        const std::string socket = params::raw("RAILSCOPE_MUNGE_SOCKET").value_or("");
        if (auto munge = open_munge(socket, &error))
          o->key = JobSecret(std::move(munge), *job);
        else
          o->no_secret_why = "; under Slurm MUNGE would do, but " + error;
      }
    if (o->key && o->unauthenticated)
      usage_error("--unauthenticated and a job secret (--token-file or RAILSCOPE_PREFLIGHT_TOKEN): give one");
    const LaunchResult lr = resolve_launch(env, flags);
    if (!lr.launch) usage_error(lr.error);
    const Launch& l = *lr.launch;
    const std::string host = o->host_name.empty() ? this_host() : o->host_name;
    if (host.empty() || host.size() > kMaxField) usage_error("--host-name must be 1..255 characters");

    const doctor::NodeFacts facts = doctor::gather({o->sysfs_root, !o->no_verbs, ""});
    const doctor::Report report = doctor::run(facts);
    NodeReport mine = summarize(facts, report, l.rank, host, process_nccl_env(), system_prefixes());
    o->link.sysfs_root = facts.inventory.sysfs_root;  // the ports' counters, from the doctor's sysfs
    o->link.counters = !o->no_counters;
    // The children say what they do only when the user asked to see each step.
    if (const std::string level = log_level_name(); level == "debug" || level == "trace")
      o->link.log_level = level;
    const int code = l.rank == 0 ? run_rank0(*o, l, std::move(mine)) : run_rank(*o, l, mine);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace railscope::cli
