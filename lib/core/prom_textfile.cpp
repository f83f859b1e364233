// SPDX-License-Identifier: Apache-2.0
#include "railscope/core/prom_textfile.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <filesystem>
#include <system_error>

#include "railscope/core/params.h"
#include "railscope/core/safe_file.h"
#include "railscope/core/utf8.h"

namespace railscope::core {
namespace {

// The first of the variables that holds a whole number ≥ 0; -1 when none does.
template <size_t N>
int first_index(const std::array<const char*, N>& vars) {
  for (const char* var : vars) {
    const std::string v = params::get_string(var);
    int n = -1;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (!v.empty() && ec == std::errc() && end == v.data() + v.size() && n >= 0) return n;
  }
  return -1;
}

}  // namespace

PromIdentity prom_identity_from_env(std::string host) {
  PromIdentity id;
  id.host = std::move(host);
  for (const char* var : {"RAILSCOPE_PROFILE_TAG", "SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID",
                          "TORCHELASTIC_RUN_ID", "RAILSCOPE_K8S_JOB_NAME"}) {
    std::string v = params::get_string(var);
    if (v.empty()) continue;
    id.job = v.substr(0, 128);
    id.job_source = var;
    break;
  }
  id.rank = first_index(std::array{"RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"});
  id.local_rank =
      first_index(std::array{"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"});
  return id;
}

std::string prom_label_value(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (u >= 0x80) {
      utf8::append_or_replacement(out, s, i);  // UTF-8 kept, a stray byte becomes U+FFFD
      continue;
    }
    if (u == '\\')
      out += "\\\\";
    else if (u == '"')
      out += "\\\"";
    else if (u == '\n')
      out += "\\n";
    else if (u < 0x20 || u == 0x7f)
      out += ' ';
    else
      out += static_cast<char>(u);
    ++i;
  }
  return out;
}

std::string prom_host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

std::string prom_identity_labels(const PromIdentity& id, int fallback_rank) {
  const int rank = id.rank >= 0 ? id.rank : fallback_rank;
  return fmt::format("job=\"{}\",host=\"{}\",rank=\"{}\",local_rank=\"{}\"", prom_label_value(id.job),
                     prom_label_value(id.host), rank,
                     id.local_rank >= 0 ? std::to_string(id.local_rank) : "");
}

PromTarget prom_target(const std::string& setting, std::string_view stem, const std::string& host, int pid) {
  namespace fs = std::filesystem;
  PromTarget t;
  std::error_code ec;
  if (setting.ends_with(".prom")) {
    const fs::path parent = fs::path(setting).parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec)) {
      t.error = fmt::format(
          "{}: the folder {} does not exist (a name ending in .prom is one file; create "
          "its folder, or name a folder to get one file per process)",
          setting, parent.string());
      return t;
    }
    if (fs::is_directory(setting, ec)) {
      t.error = fmt::format("{} is a folder, not a file: name the folder without .prom, or a file", setting);
      return t;
    }
    t.path = setting;
    return t;
  }
  fs::create_directories(setting, ec);
  if (!fs::is_directory(setting, ec)) {
    t.error = fmt::format("{} is not a folder and cannot be created", setting);
    return t;
  }
  std::string safe;
  for (const char ch : host) {
    const bool keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                      ch == '.' || ch == '-' || ch == '_';
    safe += keep ? ch : '_';
  }
  if (safe.empty()) safe = "unknown";
  t.path = fmt::format("{}/{}-{}-{}.prom", setting, stem, safe, pid);
  return t;
}

bool write_prom_textfile(const std::string& path, std::string_view content, std::string* error) {
  return write_file_atomically(path, content, error, 0644);
}

}  // namespace railscope::core
