// SPDX-License-Identifier: Apache-2.0
#include "tools/report/profile_tail.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstring>

namespace railscope::report {
namespace {

constexpr size_t kReadChunk = 1u << 20;

void note(std::vector<std::string>& problems, std::string p) {
  if (problems.size() < ProfileTail::kProblemsPerPass) problems.push_back(std::move(p));
}

// The records of one whole line, into the job state.
void feed(const std::string& line, FileCursor& cur, JobState& job, std::vector<std::string>& problems) {
  ProfileSet one;
  read_profile_line(line, cur, one);
  for (const CollRow& c : one.colls) job.add_coll(c, cur.host, cur.pid);
  for (const DiagRow& d : one.diags) job.add_diag(d, cur.host, cur.pid);
  for (const FinishedRank& r : one.finished) job.add_finished(r);
  for (std::string& p : one.problems) note(problems, std::move(p));
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

uint64_t ProfileTail::poll_file(const std::string& path, File& f, JobState& job,
                                std::vector<std::string>& problems) {
  const Fd in{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  struct stat st {};
  if (in.fd < 0 || ::fstat(in.fd, &st) != 0) return 0;  // gone or unreadable now: tried again next pass
  const auto size = static_cast<uint64_t>(st.st_size);
  const bool replaced = f.done > 0 && (st.st_dev != f.dev || st.st_ino != f.ino);
  if (replaced || size < f.done) {
    // What it held was counted already; the new content is read from its start.
    note(problems, replaced ? fmt::format("{}: replaced by another file; reading it from its start", path)
                            : fmt::format("{}: shrank from {} to {} bytes; reading it again from its start",
                                          path, f.done, size));
    const uint32_t index = f.cur.index;
    f = File{};
    f.cur.index = index;
    f.cur.path = path;
  }
  f.dev = st.st_dev;
  f.ino = st.st_ino;
  uint64_t read = 0;
  std::string chunk(kReadChunk, '\0');
  std::string line;  // the line being put together from the chunks of this pass
  for (uint64_t pos = f.done; pos < size;) {
    const ssize_t got =
        ::pread(in.fd, chunk.data(), std::min<uint64_t>(kReadChunk, size - pos), static_cast<off_t>(pos));
    if (got <= 0) break;
    const char* p = chunk.data();
    const char* const end = p + got;
    pos += static_cast<uint64_t>(got);
    while (p < end) {
      const auto* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      if (nl == nullptr) {
        if (!f.skipping) line.append(p, end);
        break;
      }
      if (f.skipping) {
        f.skipping = false;
      } else {
        line.append(p, nl);
        feed(line, f.cur, job, problems);
        line.clear();
      }
      p = nl + 1;
      const uint64_t done = pos - static_cast<uint64_t>(end - p);
      read += done - f.done;
      f.done = done;
    }
    if (f.skipping) {
      f.done = pos;
    } else if (line.size() > kMaxLineBytes) {
      note(problems, fmt::format("{}: a line longer than {} MiB; dropped", path, kMaxLineBytes >> 20));
      ++f.cur.line;
      f.skipping = true;
      f.done = pos;
      line.clear();
    }
  }
  return read;
}

uint64_t ProfileTail::poll(const std::vector<std::string>& paths, JobState& job,
                           std::vector<std::string>& problems) {
  uint64_t read = 0;
  for (const std::string& p : paths)
    for (const std::string& path : profile_files(p)) {
      auto [it, added] = files_.try_emplace(path);
      if (added) {
        it->second.cur.index = static_cast<uint32_t>(files_.size() - 1);
        it->second.cur.path = path;
      }
      read += poll_file(path, it->second, job, problems);
    }
  return read;
}

}  // namespace railscope::report
