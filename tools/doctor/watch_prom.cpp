// SPDX-License-Identifier: Apache-2.0
#include "watch_prom.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "railscope/core/prom_textfile.h"
#include "railscope/node/inventory.h"
#include "railscope/node/port_prom.h"
#include "railscope/node/sysfs.h"

namespace railscope::doctor {

std::string watch_prometheus(const WatchResult& r, const std::string& sysfs_root) {
  const node::Sysfs sysfs(sysfs_root);
  std::vector<node::PromPortSeries> ports;
  for (const WatchPortResult& w : r.ports) {
    node::PromPortSeries p;
    p.device = w.device;
    p.port = w.port;
    p.netdev = w.netdev;
    const auto rate = sysfs.read(fmt::format("class/infiniband/{}/ports/{}/rate", w.device, w.port));
    node::add_port_interval(p, w.deltas, node::read_port_state(sysfs, w.device, w.port),
                            rate ? node::mbps_from_rate_text(*rate) : 0);
    ports.push_back(std::move(p));
  }
  const core::PromIdentity id = core::prom_identity_from_env(core::prom_host_name());
  const std::string labels = core::prom_identity_labels(id, -1);
  std::string out;
  node::append_port_series(out, "railscope_doctor_port", ports, labels);
  const double unix_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  out += fmt::format(
      "# HELP railscope_doctor_watch_interval_seconds Length of the interval the doctor's port series "
      "cover, seconds.\n# TYPE railscope_doctor_watch_interval_seconds gauge\n"
      "railscope_doctor_watch_interval_seconds{{{}}} {:.3f}\n",
      labels, r.seconds);
  out += fmt::format(
      "# HELP railscope_doctor_last_write_timestamp_seconds When railscope doctor --watch wrote this file "
      "(Unix time).\n# TYPE railscope_doctor_last_write_timestamp_seconds gauge\n"
      "railscope_doctor_last_write_timestamp_seconds{{{}}} {:.3f}\n",
      labels, unix_s);
  return out;
}

std::string write_watch_prometheus(const WatchResult& r, const std::string& sysfs_root,
                                   const std::string& setting) {
  const core::PromTarget t = core::prom_target(setting, "railscope-doctor", core::prom_host_name(), getpid());
  if (!t.error.empty()) return t.error;
  std::string why;
  if (!core::write_prom_textfile(t.path, watch_prometheus(r, sysfs_root), &why))
    return fmt::format("{}: {}", t.path, why);
  return "";
}

}  // namespace railscope::doctor
