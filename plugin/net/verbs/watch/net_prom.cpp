// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/watch/net_prom.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <system_error>

#include "plugin/net/verbs/setup/discovery.h"
#include "railscope/core/diagnosis.h"
#include "railscope/core/log.h"
#include "railscope/core/params.h"
#include "railscope/node/sysfs.h"

namespace railscope::net::verbs {
namespace {

void warn_write_failed(const std::string& detail) {
  RS_WARN("NET/railscope : {}", diag::one_line(diag::make("net.prom_write_failed", detail)));
}

}  // namespace

std::unique_ptr<NetPromFile> NetPromFile::from_env(const std::vector<NetPort>& ports) {
  const std::string setting = params::get_string("RAILSCOPE_NET_PROM");
  if (setting.empty()) return nullptr;
  core::PromIdentity id = core::prom_identity_from_env(core::prom_host_name());
  const core::PromTarget t = core::prom_target(setting, "railscope-net", id.host, getpid());
  if (!t.error.empty()) {
    warn_write_failed(fmt::format("no Prometheus textfile (RAILSCOPE_NET_PROM): {}", t.error));
    return nullptr;
  }
  return std::make_unique<NetPromFile>(t.path, params::get_int("RAILSCOPE_NET_PROM_KEEP") != 0, std::move(id),
                                       ports);
}

NetPromFile::NetPromFile(std::string path, bool keep, core::PromIdentity id,
                         const std::vector<NetPort>& ports)
    : path_(std::move(path)), keep_(keep), id_(std::move(id)), ports_(ports) {
  series_.resize(ports.size());
  rails_.resize(ports.size());
  for (size_t i = 0; i < ports.size(); ++i) {
    series_[i].device = ports[i].dev_name;
    series_[i].port = ports[i].port;
    series_[i].netdev = ports[i].link_layer == node::LinkLayer::Ethernet ? ports[i].netdev : std::string();
  }
}

// The file goes with the engine unless asked to stay: a file left behind would keep a finished job's
// series alive in every scrape.
NetPromFile::~NetPromFile() {
  if (keep_) return;
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

void NetPromFile::add(size_t i, const std::vector<node::CounterDelta>& tick, const node::Sysfs& sysfs,
                      const RailRateAccumulator::Totals& rail) {
  if (i >= series_.size()) return;
  node::add_port_interval(series_[i], tick, node::read_port_state(sysfs, ports_[i].dev_name, ports_[i].port),
                          ports_[i].speed_mbps);
  Rail& r = rails_[i];
  const auto now = std::chrono::steady_clock::now();
  if (!r.seen) {
    r.seen = true;
    r.window_start = rail;
    r.window_at = now;
  } else if (now - r.window_at >= kRateWindow) {
    const RailRateAccumulator::Totals w = rail.since(r.window_start);
    if (w.transfers > 0 && w.busy_ns > 0)
      r.rate = static_cast<double>(w.bytes) / (static_cast<double>(w.busy_ns) / 1e9);
    r.window_start = rail;
    r.window_at = now;
  }
  r.total = rail;
}

std::string NetPromFile::format() const {
  const std::string labels = core::prom_identity_labels(id_, -1);
  std::string out;
  std::vector<node::PromPortSeries> ticked;
  std::vector<size_t> index;
  for (size_t i = 0; i < series_.size(); ++i)
    if (rails_[i].seen) {
      ticked.push_back(series_[i]);
      index.push_back(i);
    }
  node::append_port_series(out, "railscope_net_port", ticked, labels);
  auto port_labels = [&](size_t i) {
    return fmt::format("{},device=\"{}\",port=\"{}\",netdev=\"{}\"", labels,
                       core::prom_label_value(series_[i].device), series_[i].port,
                       core::prom_label_value(series_[i].netdev));
  };
  std::string samples;
  for (size_t i : index)
    samples +=
        fmt::format("railscope_net_port_rail_bytes_total{{{}}} {}\n", port_labels(i), rails_[i].total.bytes);
  if (!samples.empty())
    out +=
        "# HELP railscope_net_port_rail_bytes_total Bytes of large sends this process completed on the "
        "port.\n"
        "# TYPE railscope_net_port_rail_bytes_total counter\n" +
        samples;
  samples.clear();
  for (size_t i : index)
    samples += fmt::format("railscope_net_port_rail_busy_seconds_total{{{}}} {:.6f}\n", port_labels(i),
                           static_cast<double>(rails_[i].total.busy_ns) / 1e9);
  if (!samples.empty())
    out +=
        "# HELP railscope_net_port_rail_busy_seconds_total Time the port had a large send of this process in "
        "flight, seconds.\n# TYPE railscope_net_port_rail_busy_seconds_total counter\n" +
        samples;
  samples.clear();
  for (size_t i : index)
    if (rails_[i].rate >= 0)
      samples += fmt::format("railscope_net_port_rail_rate_bytes_per_second{{{}}} {:.6g}\n", port_labels(i),
                             rails_[i].rate);
  if (!samples.empty())
    out +=
        "# HELP railscope_net_port_rail_rate_bytes_per_second Large-send rate of this process on the port "
        "over the last 10 s window with large sends (bytes over busy time), bytes per second.\n"
        "# TYPE railscope_net_port_rail_rate_bytes_per_second gauge\n" +
        samples;
  // Which ports this process drives, one series per process: the rules join it by (job, host, pid) with
  // the profiler's file of the same process, so a rank's alert can name its ports.
  std::string used;
  for (size_t i : index)
    used += fmt::format("{}{}:{}", used.empty() ? "" : ",", series_[i].device, series_[i].port);
  if (!used.empty())
    out += fmt::format(
        "# HELP railscope_net_process_ports_info The ports this process's connections use "
        "(device:port, comma-separated).\n# TYPE railscope_net_process_ports_info gauge\n"
        "railscope_net_process_ports_info{{{},pid=\"{}\",ports=\"{}\"}} 1\n",
        labels, getpid(), core::prom_label_value(used));
  const double unix_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  out += fmt::format(
      "# HELP railscope_net_last_write_timestamp_seconds When this process last wrote this file (Unix time); "
      "a "
      "file whose time stops moving belongs to a process that has ended or has no connection open.\n"
      "# TYPE railscope_net_last_write_timestamp_seconds gauge\n"
      "railscope_net_last_write_timestamp_seconds{{{},pid=\"{}\"}} {:.3f}\n",
      labels, getpid(), unix_s);
  return out;
}

void NetPromFile::write() {
  std::string why;
  if (core::write_prom_textfile(path_, format(), &why)) {
    failed_ = false;
  } else if (!failed_) {
    failed_ = true;
    warn_write_failed(
        fmt::format("cannot write the Prometheus textfile {} (RAILSCOPE_NET_PROM): {}", path_, why));
  }
}

}  // namespace railscope::net::verbs
