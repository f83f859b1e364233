// SPDX-License-Identifier: Apache-2.0
// `railscope doctor --watch SECONDS --prom PATH`: the watched ports' series for node_exporter's
// textfile collector (railscope/node/port_prom.h, names railscope_doctor_port_*: the interval's counter
// increases by category, bytes, link state and rate) and a timestamp, labelled like the plugins' files
// (job, host, rank, local_rank from the environment). Written atomically with mode 0644 and kept: a
// later run replaces a `.prom` file; a folder gets one file per run (docs/monitoring.md).
#pragma once

#include <string>

#include "watch.h"

namespace railscope::doctor {

// The textfile's content for `r`, the port states and rates read under `sysfs_root`.
std::string watch_prometheus(const WatchResult& r, const std::string& sysfs_root);

// Writes it where `setting` says (railscope/core/prom_textfile.h prom_target); "" on success, else why not.
std::string write_watch_prometheus(const WatchResult& r, const std::string& sysfs_root,
                                   const std::string& setting);

}  // namespace railscope::doctor
