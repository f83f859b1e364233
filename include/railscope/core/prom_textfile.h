// SPDX-License-Identifier: Apache-2.0
// What every railscope textfile for node_exporter's textfile collector shares (text format 0.0.4,
// https://prometheus.io/docs/instrumenting/exposition_formats/): who the series belong to (job, global
// rank, local rank, host, read from the launcher's environment), label values escaped as the format wants,
// where the file goes (a folder, or one file when the setting ends in ".prom") and how it is written
// (a unique temporary name, then renamed; mode 0644 whatever the umask, so the collector's user can read
// it). docs/monitoring.md describes the labels and their sources.
#pragma once

#include <string>
#include <string_view>

namespace railscope::core {

struct PromIdentity {
  std::string job;         // "" when nothing names the job
  std::string job_source;  // the variable the job came from ("" when none)
  std::string host;
  int rank = -1;        // the launcher's global rank; -1 when none is set
  int local_rank = -1;  // the launcher's rank on this node; -1 when none is set
};

// The job from, in this order: RAILSCOPE_PROFILE_TAG, SLURM_JOB_ID, PBS_JOBID, LSB_JOBID,
// TORCHELASTIC_RUN_ID, RAILSCOPE_K8S_JOB_NAME. The rank from RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK,
// PMI_RANK, SLURM_PROCID; the local rank from LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
// SLURM_LOCALID (the first that is set and a whole number ≥ 0).
PromIdentity prom_identity_from_env(std::string host);
// This machine's host name (gethostname), "unknown" when it cannot be read.
std::string prom_host_name();

// A label value as the text format wants it: valid UTF-8 (ill-formed bytes become U+FFFD), `\`, `"` and
// line feed escaped, other control characters replaced by a space.
std::string prom_label_value(std::string_view s);

// `job="…",host="…",rank="…",local_rank="…"`; `rank` is id.rank when known, else fallback_rank (the rank in
// a communicator); an unknown local rank is written as "".
std::string prom_identity_labels(const PromIdentity& id, int fallback_rank);

// Where one process's textfile goes. A setting ending in ".prom" is the file itself (its folder must
// exist); anything else is a folder (created when missing) that gets `<stem>-<host>-<pid>.prom` (host
// reduced to [A-Za-z0-9._-]). `error` says why there is no path ("" when there is one).
struct PromTarget {
  std::string path;
  std::string error;
};
PromTarget prom_target(const std::string& setting, std::string_view stem, const std::string& host, int pid);

// Replaces path atomically with content, mode 0644 (write_file_atomically's guarantees otherwise).
bool write_prom_textfile(const std::string& path, std::string_view content, std::string* error);

}  // namespace railscope::core
