// SPDX-License-Identifier: Apache-2.0
#include "plugin/profiler/core/jsonl_format.h"

#include <fmt/format.h>

#include <cmath>

#include "plugin/profiler/core/clock.h"
#include "railscope/core/utf8.h"

namespace railscope::profiler {
namespace {

std::string opt_num(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return "null";
  return fmt::format("{:.6g}", *v);
}
std::string opt_int(int v, bool known) { return known ? std::to_string(v) : "null"; }
// Built in place, not as `"\"" + json_escape(...) + "\""`: GCC 12 -O3 reports a false -Wrestrict inside
// libstdc++ for operator+ of a one-character literal and a std::string (GCC bug 105329,
// https://gcc.gnu.org/bugzilla/show_bug.cgi?id=105329), which broke the Release build.
std::string str(const char* s) {
  std::string out(1, '"');
  out += json_escape(s ? s : "");
  out += '"';
  return out;
}

void append_comm_fields(std::string& out, const CommIdentity& c, int rank) {
  out += fmt::format("\"comm\":\"{}\",\"rank\":{},\"nranks\":{},\"nnodes\":{}", comm_hex(c.hash), rank,
                     opt_int(c.nranks, c.nranks > 0), opt_int(c.nnodes, c.nnodes > 0));
}

}  // namespace

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char ch = s[i];
    const auto u = static_cast<unsigned char>(ch);
    if (u >= 0x80) {
      // JSON text is UTF-8 (RFC 8259 §8.1): a byte that starts no well-formed sequence (a comm name
      // or tag in another encoding, a cut sequence) becomes U+FFFD, so the line stays valid JSON.
      utf8::append_or_replacement(out, s, i);
      continue;
    }
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20)
          out += fmt::format("\\u{:04x}", u);
        else
          out += ch;
    }
    ++i;
  }
  return out;
}

std::string comm_hex(uint64_t hash) { return fmt::format("0x{:016x}", hash); }

std::string format_header(const HeaderInfo& h) {
  return fmt::format(
      "{{\"type\":\"header\",\"schema\":\"railscope.profile\",\"version\":{},\"railscope_version\":\"0.1.0\","
      "\"hostname\":\"{}\",\"pid\":{},\"start_unix_ns\":{},\"tag\":\"{}\",\"net\":\"{}\",\"net_plugin\":\"{}"
      "\"}}\n",
      kSchemaVersion, json_escape(h.hostname), h.pid, h.start_unix_ns, json_escape(h.tag), json_escape(h.net),
      json_escape(h.net_plugin));
}

std::string format_comm(const CommIdentity& c, int mask, uint64_t unix_ns) {
  std::string out = "{\"type\":\"comm\",";
  append_comm_fields(out, c, c.rank);
  out += fmt::format(",\"name\":\"{}\",\"abi\":{},\"mask\":{},\"unix_ns\":{}}}\n", json_escape(c.name), c.abi,
                     mask, unix_ns);
  return out;
}

std::string format_record(const CommIdentity& c, const CollRecord& r) {
  std::string out = r.is_p2p ? "{\"type\":\"p2p\"," : "{\"type\":\"coll\",";
  append_comm_fields(out, c, c.rank >= 0 ? c.rank : r.rank);
  out += fmt::format(",\"seq\":{},\"op\":\"{}\",\"dtype\":{},\"count\":{},\"bytes\":{}", r.seq, op_name(r.op),
                     str(r.datatype), r.count, r.bytes);
  if (r.is_p2p)
    out += fmt::format(",\"peer\":{}", r.peer);
  else
    out += fmt::format(",\"ord\":{},\"root\":{},\"algo\":{},\"proto\":{}", r.ord, r.root, str(r.algo),
                       str(r.proto));
  out += fmt::format(",\"channels\":{},\"graph\":{}", r.channels,
                     r.graph < 0 ? "null" : (r.graph ? "true" : "false"));
  out += fmt::format(
      ",\"start_unix_ns\":{},\"end_unix_ns\":{},\"time_us\":{},\"timing\":\"{}\",\"algbw_gbs\":{},"
      "\"busbw_gbs\":{},\"complete\":{}",
      r.start_unix_ns, r.end_unix_ns, opt_num(r.time_us), r.timing, opt_num(r.algbw_gbs),
      opt_num(r.busbw_gbs), r.complete ? "true" : "false");
  if (!r.waits.empty() || r.waits_dropped > 0) {
    out += ",\"waits\":[";
    for (size_t i = 0; i < r.waits.size(); ++i) {
      const WaitEntry& w = r.waits[i];
      out += fmt::format(
          "{}{{\"ch\":{},\"peer\":{},\"dir\":\"{}\",\"steps\":{},\"bytes\":{},\"peer_wait_us\":{:.3f},"
          "\"net_us\":{:.3f},\"gpu_wait_us\":{:.3f}}}",
          i ? "," : "", w.channel, w.peer, w.is_send ? "send" : "recv", w.steps, w.bytes, ns_to_us(w.peer_ns),
          ns_to_us(w.net_ns), ns_to_us(w.gpu_ns));
    }
    out += fmt::format("],\"waits_dropped\":{}", r.waits_dropped);
  }
  out += "}\n";
  return out;
}

std::string format_diag(const diag::Finding& f, const DiagContext& ctx) {
  std::string out = fmt::format("{{\"type\":\"diag\",\"id\":\"{}\",\"severity\":\"{}\"", f.id(),
                                diag::to_string(f.severity));
  if (ctx.comm != nullptr)
    out += fmt::format(",\"comm\":\"{}\",\"rank\":{}", comm_hex(ctx.comm->hash), ctx.rank);
  if (!ctx.op.empty()) out += fmt::format(",\"op\":\"{}\",\"seq\":{}", json_escape(ctx.op), ctx.seq);
  if (const StuckColl* s = ctx.stuck; s != nullptr) {
    if (s->ord) out += fmt::format(",\"ord\":{}", *s->ord);
    out += fmt::format(",\"count\":{},\"dtype\":{},\"bytes\":{},\"start_unix_ns\":{}", s->count,
                       str(s->dtype), s->bytes, s->start_unix_ns);
  }
  out += fmt::format(",\"detail\":\"{}\",\"fix\":\"{}\",\"unix_ns\":{}", json_escape(f.detail),
                     json_escape(f.effective_fix()), ctx.unix_ns);
  if (ctx.waiting != nullptr) {
    out += ",\"waiting\":[";
    for (size_t i = 0; i < ctx.waiting->size(); ++i) {
      const WaitingOp& w = (*ctx.waiting)[i];
      out += fmt::format(
          "{}{{\"ch\":{},\"peer\":{},\"dir\":\"{}\",\"state\":\"{}\",\"since_us\":{:.0f},\"meaning\":\"{}\"}"
          "}",
          i ? "," : "", w.channel, w.peer, w.is_send ? "send" : "recv", w.state, ns_to_us(w.since_ns),
          wait_kind_name(w.meaning));
    }
    out += "]";
  }
  out += "}\n";
  return out;
}

std::string format_qp(const CommIdentity& c, const QpStats& q) {
  const uint64_t key = q.key.load() - 1;
  const uint64_t completions = q.completions.load();
  const double mean_us = completions ? ns_to_us(q.lat_sum_ns.load()) / static_cast<double>(completions) : 0.0;
  return fmt::format(
      "{{\"type\":\"qp\",\"comm\":\"{}\",\"rank\":{},\"source\":\"{}\",\"device\":{},\"qp\":{},\"wrs\":{},"
      "\"bytes\":{},\"completions\":{},\"lat_mean_us\":{:.3f},\"lat_max_us\":{:.3f},\"errors\":{}}}\n",
      comm_hex(c.hash), c.rank, (key >> 62) == 2 ? "railscope" : "ib", (key >> 32) & 0xFFFF, key & 0xFFFFFFFF,
      q.wrs.load(), q.bytes.load(), completions, mean_us, ns_to_us(q.lat_max_ns.load()), q.errors.load());
}

std::string format_summary(const CommState& c, uint64_t unix_ns) {
  std::string dropped;
  for (size_t i = 0; i < static_cast<size_t>(DropKind::Count); ++i)
    dropped += fmt::format("{}\"{}\":{}", i ? "," : "", kDropNames[i], c.dropped[i].load());
  return fmt::format(
      "{{\"type\":\"summary\",\"comm\":\"{}\",\"rank\":{},\"colls\":{},\"p2ps\":{},\"incomplete\":{},"
      "\"dropped\":{{{}}},\"pxn_proxy_ops\":{},\"unix_ns\":{}}}\n",
      comm_hex(c.ident.hash), c.ident.rank, c.monitor.colls_written, c.monitor.p2ps_written,
      c.monitor.incomplete, dropped, c.pxn_proxy_ops.load(), unix_ns);
}

std::string format_fabric(const FabricWindow& w) {
  constexpr size_t kMaxCountersPerPort = 64;  // keeps a line bounded whatever the provider publishes
  std::string out = fmt::format("{{\"type\":\"fabric\",\"start_unix_ns\":{},\"end_unix_ns\":{},\"ports\":[",
                                w.start_unix_ns, w.end_unix_ns);
  for (size_t i = 0; i < w.ports.size(); ++i) {
    const PortWindow& p = w.ports[i];
    out += fmt::format(
        "{}{{\"port\":\"{}\",\"state\":\"{}\",\"link_layer\":\"{}\",\"speed_gbit\":{}", i ? "," : "",
        json_escape(p.name()), json_escape(p.state), json_escape(p.link_layer),
        p.speed_mbps > 0 ? fmt::format("{:g}", static_cast<double>(p.speed_mbps) / 1000.0) : "null");
    for (size_t k = 0; k < kNumCounterCategories; ++k)
      out +=
          fmt::format(",\"{}\":{}", node::to_string(static_cast<node::CounterCategory>(k)), p.by_category[k]);
    out += fmt::format(",\"reset\":{},\"counters\":{{", p.reset ? "true" : "false");
    size_t shown = 0;
    for (const node::CounterDelta& d : p.deltas) {
      if (d.delta == 0) continue;
      if (shown == kMaxCountersPerPort) break;
      out += fmt::format("{}\"{}\":{}", shown++ ? "," : "", json_escape(d.name), d.delta);
    }
    out += "}}";
  }
  out += "]}\n";
  return out;
}

}  // namespace railscope::profiler
