// SPDX-License-Identifier: Apache-2.0
#include "runner.h"

#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cpus.h"
#include "engine_name.h"
#include "net_api.h"
#include "oob.h"
#include "payload.h"
#include "plan_checks.h"
#include "railscope/cli/logging.h"
#include "railscope/core/params.h"
#include "railscope/node/sysfs.h"
#include "report.h"
#include "session.h"
#include "transfer.h"

namespace railscope::netbench {
namespace {

Session::Idle idle_policy(const std::string& poll) {
  return poll == "spin" ? Session::Idle::Spin : poll == "sleep" ? Session::Idle::Sleep : Session::Idle::Yield;
}

char g_role[16] = "netbench";
bool g_info = false;

void plugin_logger(ncclDebugLogLevel level, unsigned long /*flags*/, const char* /*file*/, int /*line*/,
                   const char* fmt, ...) {
  if (level == NCCL_LOG_NONE) return;
  if (level != NCCL_LOG_WARN && level != NCCL_LOG_ABORT && level != NCCL_LOG_VERSION && !g_info) return;
  if (level == NCCL_LOG_TRACE && !g_info) return;
  char text[4096];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  // "NCCL WARN" stays in the line: what the plugin said as NCCL would have printed it (scripts grep it).
  const char* name = level == NCCL_LOG_WARN    ? "WARN"
                     : level == NCCL_LOG_INFO  ? "INFO"
                     : level == NCCL_LOG_TRACE ? "TRACE"
                     : level == NCCL_LOG_ABORT ? "ABORT"
                                               : "VERSION";
  cli::log_nccl_line(
      level, fmt::format("netbench {}[{}]: NCCL {} {}", g_role, static_cast<int>(getpid()), name, text),
      g_info);
}

std::chrono::milliseconds oob_timeout(const Options& o) { return std::chrono::seconds(o.timeout_s) * 2; }

void copy_str(char* dst, size_t n, const std::string& s) { std::snprintf(dst, n, "%s", s.c_str()); }

// The plugin opened, initialised and its device found; finalised on destruction.
struct PluginUse {
  OpenedPlugin opened;
  int dev = -1;
  DeviceInfo info;
  bool inited = false;

  explicit PluginUse(const Options& o) : PluginUse(o, o.dev) {}
  PluginUse(const Options& o, const std::string& device) {
    opened = open_plugin(o.plugin);
    if (!opened.api) {
      std::string tried;
      for (const auto& t : opened.library.tried) tried += (tried.empty() ? "" : ", ") + t;
      throw BenchError("cannot load the net plugin '" +
                       (o.plugin.empty() ? default_plugin_path() : o.plugin) + "' (tried " + tried +
                       "): " + opened.library.error);
    }
    check(opened.api->init(&plugin_logger), "init");
    inited = true;
    int n = 0;
    check(opened.api->devices(&n), "devices");
    if (n <= 0) throw BenchError("the plugin reports no network device");
    dev = find_device(*opened.api, device);
    if (dev < 0) {
      std::string names;
      for (int i = 0; i < n; ++i) {
        DeviceInfo d;
        if (opened.api->properties(i, &d) == ncclSuccess) names += (names.empty() ? "" : ", ") + d.name;
      }
      throw BenchError("no device '" + device + "' in the plugin (it has: " + names + ")");
    }
    check(opened.api->properties(dev, &info), "getProperties");
  }
  ~PluginUse() {
    if (inited) {
      const ncclResult_t r = opened.api->finalize();
      if (r != ncclSuccess) std::fprintf(stderr, "netbench: finalize failed: %s\n", result_name(r));
    }
  }
  NetApi& api() { return *opened.api; }
};

void report_failure(OobSocket* oob, const std::string& what) {
  std::fprintf(stderr, "netbench %s: error: %s\n", g_role, what.c_str());
  if (oob != nullptr && oob->fd() >= 0) {
    try {
      oob->send(kMsgError, {reinterpret_cast<const unsigned char*>(what.data()), what.size()});
    } catch (const BenchError&) {  // the peer may be gone: nothing more to tell it
    }
  }
}

Payload latency_payload(uint64_t seed) { return Payload(seed ^ 0x6c6174656e6379ULL, 2); }

}  // namespace

void set_log_role(const char* role, bool verbose) {
  std::snprintf(g_role, sizeof g_role, "%s", role);
  const std::string level = params::get_string("NCCL_DEBUG");
  g_info = verbose || level == "INFO" || level == "TRACE" || level == "info" || level == "trace";
}

int run_server(const Options& o) {
  OobSocket oob;
  try {
    OobListener listener =
        o.oob_fd >= 0 ? OobListener::adopt(o.oob_fd) : OobListener::bind(o.oob_bind, o.oob_port);
    // Progress (info): a user who started this server reads where to point the client; a parent that
    // started it (preflight, --pair) passes its own level, and only debug shows it there.
    if (o.oob_fd < 0)
      spdlog::info("netbench server: waiting on {} port {}",
                   o.oob_bind.empty() ? "all addresses," : o.oob_bind, listener.port());
    oob = listener.accept(std::chrono::seconds(o.timeout_s) * 5);
    const auto params = oob.receive_struct<RunParams>(kMsgHello, oob_timeout(o));
    if (params.magic != kProtocolMagic || params.version != kProtocolVersion)
      throw BenchError("the client speaks another netbench protocol (version " +
                       std::to_string(params.version) + ")");
    if (auto why = check_run_params(params)) throw BenchError(*why);
    PluginUse plugin(o);
    PeerInfo me;
    copy_str(me.device, sizeof me.device, plugin.info.name);
    char host[64] = {};
    gethostname(host, sizeof host - 1);
    copy_str(me.host, sizeof me.host, host);
    copy_str(me.plugin, sizeof me.plugin, plugin.api().name());
    me.version = plugin.api().version();
    me.max_recvs = plugin.info.max_recvs;
    oob.send_struct(kMsgHelloAck, me);

    Session s(plugin.api(), plugin.dev, std::chrono::seconds(params.timeout_s));
    s.set_idle(idle_policy(o.poll));
    s.connect(oob);
    s.register_regions(params.buffer_bytes);
    const bool verify = params.verify != 0;
    for (;;) {
      auto [type, bytes] = oob.receive_any(std::chrono::seconds(params.timeout_s) * 4);
      if (type == kMsgDone) break;
      if (type == kMsgError) throw BenchError("the client failed: " + peer_text(bytes.data(), bytes.size()));
      if (type != kMsgSizeBegin || bytes.size() != sizeof(SizePlan))
        throw BenchError("unexpected out-of-band message " + std::to_string(type));
      SizePlan plan;
      std::memcpy(&plan, bytes.data(), sizeof plan);
      if (auto why = check_size_plan(plan, s.send_region().size())) throw BenchError(*why);
      const SlotLayout l = slot_layout(plan);
      if (plan.messages > 0) {
        const Payload bw(params.seed, l.send_slots);
        prepare_slots(s, plan, bw, l.send_slots, l.recv_slots);
        oob.send(kMsgReady, {});
        const PhaseResult r = receive_stream(s, plan, bw, verify);
        oob.send_struct(kMsgBwResult, r);
      }
      if (plan.lat_iters > 0) {
        const Payload lat = latency_payload(params.seed);
        prepare_slots(s, plan, lat, 2, 1);
        oob.send(kMsgReady, {});
        const PhaseResult r = pong(s, plan, lat, verify);
        oob.send_struct(kMsgLatResult, r);
      }
    }
    s.close();
    return 0;
  } catch (const BenchError& e) {
    report_failure(&oob, e.what());
    return 1;
  }
}

namespace {

// One client run over `oob` on device `dev` of an initialised plugin; the table goes to `out` (stdout
// when null, row by row). Throws BenchError; returns 0 or 3 (data verification failed).
int client_on(const Options& o, OobSocket& oob, PluginUse& plugin, int dev, const DeviceInfo& info,
              std::string* out) {
  RunParams params;
  params.seed = o.seed != 0 ? o.seed : std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
  params.buffer_bytes = region_bytes(o);
  params.verify = o.verify ? 1 : 0;
  params.modes = o.modes();
  params.timeout_s = o.timeout_s;
  oob.send_struct(kMsgHello, params);
  const auto peer = oob.receive_struct<PeerInfo>(kMsgHelloAck, oob_timeout(o));

  RunHeader h;
  h.plugin_path = plugin.opened.library.real_path.empty() ? plugin.opened.library.opened_name
                                                          : plugin.opened.library.real_path;
  h.plugin_symbol = plugin.opened.library.symbol;
  h.plugin_name = plugin.api().name();
  h.client_device = info.name;
  h.engine = engine_of_device(info.name, node::Sysfs::default_root());
  h.server_device = std::string(peer.device, strnlen(peer.device, sizeof peer.device));
  h.server_host = std::string(peer.host, strnlen(peer.host, sizeof peer.host));
  h.verify = o.verify;
  h.client_cpus = allowed_cpus();
  h.seed = params.seed;

  Session s(plugin.api(), dev, std::chrono::seconds(o.timeout_s));
  s.set_idle(idle_policy(o.poll));
  s.connect(oob);
  s.register_regions(params.buffer_bytes);
  auto print = [out](const std::string& text) {
    if (out != nullptr) {
      *out += text;
      return;
    }
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
  };
  if (!o.json) print(table_header(h));
  std::vector<Row> rows;
  bool bad_data = false;
  for (const uint64_t size : run_sizes(o.min_size, o.max_size)) {
    const SizePlan plan = plan_size(o, size, params.buffer_bytes);
    Row row;
    row.size = size;
    row.recvs = plan.recvs;
    row.window = plan.window;
    const SlotLayout l = slot_layout(plan);
    // One phase of this size as its own plan (the server runs whatever phases a plan has).
    auto bandwidth = [&](uint32_t timed) {
      SizePlan p = plan;
      p.lat_iters = p.lat_warmup = 0;
      p.messages = p.warmup + static_cast<uint32_t>((uint64_t{timed} + p.recvs - 1) / p.recvs * p.recvs);
      oob.send_struct(kMsgSizeBegin, p);
      const Payload bw(params.seed, l.send_slots);
      prepare_slots(s, p, bw, l.send_slots, l.recv_slots);
      (void)oob.receive(kMsgReady, oob_timeout(o));
      const SendResult sr = send_stream(s, p, o.verify);
      const auto rr = oob.receive_struct<PhaseResult>(kMsgBwResult, oob_timeout(o));
      row.bw_messages = p.messages - p.warmup;
      row.bw_messages_total += p.messages;
      row.bw_seconds = static_cast<double>(sr.elapsed_ns) * 1e-9;
      row.bytes_per_s = sr.elapsed_ns > 0
                            ? static_cast<double>(sr.timed_bytes) * 1e9 / static_cast<double>(sr.elapsed_ns)
                            : 0;
      if (size == 0) row.bytes_per_s = 0;
      row.verified += o.verify ? rr.messages_ok : 0;
      row.mismatches += rr.mismatches;
      if (rr.mismatches && row.first_mismatch.empty())
        row.first_mismatch = "server: " + peer_text(rr.first_mismatch, sizeof rr.first_mismatch);
    };
    auto latency = [&](uint32_t iters) {
      SizePlan p = plan;
      p.messages = p.warmup = 0;
      p.lat_iters = iters;
      oob.send_struct(kMsgSizeBegin, p);
      const Payload lat = latency_payload(params.seed);
      prepare_slots(s, p, lat, 2, 1);
      (void)oob.receive(kMsgReady, oob_timeout(o));
      PhaseResult replies;
      const auto rtt = ping(s, p, lat, o.verify, &replies);
      const auto rr = oob.receive_struct<PhaseResult>(kMsgLatResult, oob_timeout(o));
      row.lat_iters = p.lat_iters;
      row.lat_round_trips_total += uint64_t{p.lat_iters} + p.lat_warmup;
      row.lat_seconds = 0;
      for (double us : rtt) row.lat_seconds += us * 1e-6;
      row.lat_p50_us = percentile(rtt, 50) / 2;
      row.lat_p99_us = percentile(rtt, 99) / 2;
      row.verified += o.verify ? rr.messages_ok + replies.messages_ok : 0;
      row.mismatches += rr.mismatches + replies.mismatches;
      if (row.first_mismatch.empty() && rr.mismatches)
        row.first_mismatch = "server: " + peer_text(rr.first_mismatch, sizeof rr.first_mismatch);
      if (row.first_mismatch.empty() && replies.mismatches)
        row.first_mismatch = "client: " + peer_text(replies.first_mismatch, sizeof replies.first_mismatch);
    };
    // Each phase once; again, longer, when it lasted less than --min-time (counts bounded: uint32).
    constexpr uint64_t kMostMessages = 1u << 24;
    if (plan.messages > 0) {
      bandwidth(plan.messages - plan.warmup);
      const uint64_t want =
          std::min(kMostMessages, messages_for_min_time(o, row.bw_messages, row.bw_seconds));
      if (want > row.bw_messages) bandwidth(static_cast<uint32_t>(want));
    }
    if (plan.lat_iters > 0) {
      latency(plan.lat_iters);
      const uint64_t want = std::min(kMostMessages, messages_for_min_time(o, row.lat_iters, row.lat_seconds));
      if (want > row.lat_iters) latency(static_cast<uint32_t>(want));
    }
    row.few_samples =
        (plan.messages > 0 && (row.bw_messages < o.min_messages || row.bw_seconds < o.min_time_s)) ||
        (plan.lat_iters > 0 && (row.lat_iters < o.min_messages || row.lat_seconds < o.min_time_s));
    bad_data |= row.mismatches > 0;
    if (!o.json) print(table_row(row));
    rows.push_back(std::move(row));
  }
  oob.send(kMsgDone, {});
  s.close();
  if (o.json) print(to_json(h, rows));
  if (bad_data) {
    std::fprintf(stderr, "netbench client: error: data verification FAILED (see DATA MISMATCH rows)\n");
    return 3;
  }
  return 0;
}

// --dev A,B,...: one process drives several devices at once, as one NCCL process drives its rails:
// one thread per device, each with its own server at --oob-port + i; the tables are printed in device
// order once every thread is done. The worst status wins.
int run_client_rails(const Options& o, const std::vector<std::string>& devs) {
  std::unique_ptr<PluginUse> plugin;
  try {
    plugin = std::make_unique<PluginUse>(o, devs[0]);
  } catch (const BenchError& e) {
    report_failure(nullptr, e.what());
    return 1;
  }
  std::vector<std::string> out(devs.size());
  std::vector<int> rc(devs.size(), 1);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < devs.size(); ++i)
    threads.emplace_back([&, i] {
      OobSocket oob;
      try {
        const int dev = find_device(plugin->api(), devs[i]);
        if (dev < 0) throw BenchError("no device '" + devs[i] + "' in the plugin");
        DeviceInfo info;
        check(plugin->api().properties(dev, &info), "getProperties");
        oob =
            oob_connect(o.oob_host, static_cast<uint16_t>(o.oob_port + i), std::chrono::seconds(o.timeout_s));
        rc[i] = client_on(o, oob, *plugin, dev, info, &out[i]);
      } catch (const BenchError& e) {
        report_failure(&oob, devs[i] + ": " + e.what());
        rc[i] = 1;
      }
    });
  for (auto& t : threads) t.join();
  int worst = 0;
  for (size_t i = 0; i < devs.size(); ++i) {
    std::fputs(out[i].c_str(), stdout);
    worst = std::max(worst, rc[i]);
  }
  std::fflush(stdout);
  return worst;
}

}  // namespace

int run_client(const Options& o) {
  if (o.dev.find(',') != std::string::npos) {
    std::vector<std::string> devs;
    size_t from = 0;
    for (size_t comma; (comma = o.dev.find(',', from)) != std::string::npos; from = comma + 1)
      devs.push_back(o.dev.substr(from, comma - from));
    devs.push_back(o.dev.substr(from));
    for (const auto& d : devs)
      if (d.empty()) {
        report_failure(nullptr, "--dev " + o.dev + ": an empty device name");
        return 1;
      }
    return run_client_rails(o, devs);
  }
  OobSocket oob;
  try {
    oob = oob_connect(o.oob_host, o.oob_port, std::chrono::seconds(o.timeout_s));
    PluginUse plugin(o);
    return client_on(o, oob, plugin, plugin.dev, plugin.info, nullptr);
  } catch (const BenchError& e) {
    report_failure(&oob, e.what());
    return 1;
  }
}

}  // namespace railscope::netbench
