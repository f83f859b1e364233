// SPDX-License-Identifier: Apache-2.0
// `railscope netbench`: bandwidth and latency through a net plugin's ABI, as NCCL would see them.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "options.h"
#include "plan_checks.h"
#include "railscope/cli/size.h"
#include "railscope/cli/usage.h"
#include "report.h"
#include "runner.h"

namespace railscope::cli {

namespace {

void add_common(CLI::App* c, netbench::Options& o) {
  c->add_option("--plugin", o.plugin,
                "Net plugin: a path or a name as NCCL_NET_PLUGIN takes it (default: railscope's)");
  add_size_option(c, "--min-size", o.min_size, "Smallest message in bytes, default 8");
  add_size_option(c, "--max-size", o.max_size,
                  "Largest message, default 64M (sizes are powers of two), at most 1G",
                  netbench::kMaxMessageBytes);
  c->add_option("--iters", o.iters, "Bandwidth messages per size (capped by --bytes-per-size)")
      ->capture_default_str();
  c->add_option("--warmup", o.warmup, "Untimed messages per size")->capture_default_str();
  c->add_option("--lat-iters", o.lat_iters, "Ping-pong round trips per size (capped by --bytes-per-size/4)")
      ->capture_default_str();
  add_size_option(c, "--bytes-per-size", o.bytes_per_size, "Traffic budget per size, default 32M", UINT64_MAX,
                  1);
  c->add_option("--min-messages", o.min_messages,
                "Timed messages (round trips) per size and phase, at least, whatever the budget")
      ->capture_default_str();
  c->add_option("--min-time", o.min_time_s,
                "Seconds per size and phase, at least: a shorter phase runs again, longer (0 = off)")
      ->check(CLI::Range(0.0, 60.0))
      ->capture_default_str();
  c->add_option("--window", o.window, "Receive requests in flight (NCCL allows 32)")
      ->check(CLI::Range(1, 32))
      ->capture_default_str();
  c->add_option("--recvs", o.recvs, "Buffers per grouped receive (irecv n)")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  add_size_option(c, "--buffer-bytes", o.buffer_cap,
                  "Registered bytes per direction, at most; 4K to 2G, default 128M",
                  netbench::kMaxBufferBytes, netbench::kMinBufferBytes);
  c->add_flag("!--no-verify", o.verify, "Do not check the received bytes (pattern + checksum per message)");
  c->add_flag("--json", o.json, "Print the results as JSON");
  c->add_option("--mode", o.mode, "What to measure")
      ->check(CLI::IsMember({"bw", "lat", "both"}))
      ->capture_default_str();
  c->add_option("--seed", o.seed, "Payload seed (0 = random)");
  c->add_option("--timeout", o.timeout_s, "Seconds without progress before netbench gives up")
      ->check(CLI::Range(1u, netbench::kMaxTimeoutS))
      ->capture_default_str();
  c->add_option(
       "--poll", o.poll,
       "When a waiting pass completes nothing: yield the CPU (as NCCL's proxy thread does), spin, or "
       "sleep 50 us (a process that leaves the CPU to the kernel, as perftest's bandwidth server does)")
      ->check(CLI::IsMember({"yield", "spin", "sleep"}))
      ->capture_default_str();
  c->add_flag("-v,--verbose", o.verbose, "Also print the plugin's INFO lines");
}

// What one flag's validator cannot see: the flags against each other: a usage error.
void check_sizes(const netbench::Options& o) {
  if (o.min_size > o.max_size) {
    std::fprintf(stderr, "railscope netbench: --min-size (%llu) is above --max-size (%llu)\n",
                 static_cast<unsigned long long>(o.min_size), static_cast<unsigned long long>(o.max_size));
    throw CLI::RuntimeError(kExitUsage);
  }
  // Knowable before any connection: a run that would measure nothing fails (exit 1) instead of
  // printing a header and no row.
  if (const std::string why = netbench::no_size_reason(o.min_size, o.max_size); !why.empty()) {
    std::fprintf(stderr, "railscope netbench: %s\n", why.c_str());
    throw CLI::RuntimeError(1);  // netbench's "failure" (docs/cli.md), not a usage error
  }
}

// The client prints the table, so it says which sizes it moved (the server and --pair's parent stay
// quiet: one note per run).
void note_rounding(const netbench::Options& o) {
  for (const std::string& note : netbench::size_rounding_notes(o.min_size, o.max_size))
    std::fprintf(stderr, "railscope netbench: %s\n", note.c_str());
}

void finish(int rc) {
  std::fflush(stdout);
  if (rc != 0) throw CLI::RuntimeError(rc);
}

}  // namespace

void add_netbench(CLI::App& app) {
  struct State {
    netbench::Options o;
  };
  static State st;  // CLI11 binds options to storage that outlives parsing
  auto* nb =
      app.add_subcommand("netbench",
                         "Bandwidth/latency through a net plugin's ABI (like ib_write_bw/ib_write_lat, as "
                         "NCCL sees it)");
  nb->add_option("--pair", st.o.pair, "Run both ends on this node, two processes: --pair DEV_A,DEV_B");
  nb->add_option("--pin-cpus", st.o.pin_cpus,
                 "With --pair: run the server (DEV_A) on CPU A only and the client on CPU B: --pin-cpus A,B");
  add_common(nb, st.o);
  nb->callback([nb] {
    if (nb->get_subcommands().empty()) {
      if (st.o.pair.empty()) {
        std::fprintf(stderr,
                     "railscope netbench: use --pair DEV_A,DEV_B, or the server/client subcommands\n");
        throw CLI::RuntimeError(kExitUsage);
      }
      check_sizes(st.o);
      finish(netbench::run_pair(st.o, "/proc/self/exe"));
    }
  });

  auto* server = nb->add_subcommand("server", "Receiving end: listens for a client on --oob-port");
  server->add_option("--dev", st.o.dev, "Device (name or index)")->capture_default_str();
  server->add_option("--oob-host", st.o.oob_bind,
                     "Address to listen on for the client (default: all addresses)");
  server->add_option("--oob-port", st.o.oob_port, "TCP port for the out-of-band exchange")
      ->capture_default_str();
  server->add_option("--oob-fd", st.o.oob_fd, "An already listening socket (used by --pair)")->group("");
  add_common(server, st.o);
  server->callback([] {
    check_sizes(st.o);
    netbench::set_log_role("server", st.o.verbose);
    finish(netbench::run_server(st.o));
  });

  auto* client = nb->add_subcommand("client", "Sending end: connects to a server, measures and prints");
  client
      ->add_option("--dev", st.o.dev,
                   "Device (name or index); A,B,... drives several at once from one process (one thread "
                   "each, the server of device i on --oob-port + i), as NCCL drives its rails")
      ->capture_default_str();
  client->add_option("--oob-host", st.o.oob_host, "Host of the server's out-of-band port")
      ->capture_default_str();
  client->add_option("--oob-port", st.o.oob_port, "TCP port of the server")->capture_default_str();
  add_common(client, st.o);
  client->callback([] {
    check_sizes(st.o);
    note_rounding(st.o);
    netbench::set_log_role("client", st.o.verbose);
    finish(netbench::run_client(st.o));
  });
}

}  // namespace railscope::cli
