// SPDX-License-Identifier: Apache-2.0
#include "plugin/profiler/core/record_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "railscope/core/safe_file.h"

namespace railscope::profiler {

bool RecordFile::open(const std::string& path, std::string* error) {
  close();
  fd_ = core::open_for_append(path, error);
  torn_ = false;
  return fd_ >= 0;
}

void RecordFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

uint64_t RecordFile::take_lost() {
  const uint64_t n = lost_;
  lost_ = 0;
  return n;
}

bool RecordFile::append(std::string_view records, std::string* error) {
  if (fd_ < 0 || records.empty()) return fd_ >= 0;
  const size_t separator = torn_ ? 1 : 0;
  std::string joined;
  if (torn_) {
    joined = "\n";
    joined += records;
    records = joined;
  }
  // One writer per file (the name holds the pid, and the monitor thread holds its lock), so the end of the
  // file before this write is where these records begin.
  const off_t start = ::lseek(fd_, 0, SEEK_END);
  size_t done = 0;
  int err = 0;
  while (done < records.size()) {
    const ssize_t n = ::write(fd_, records.data() + done, records.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      err = n < 0 ? errno : EIO;
      break;
    }
  }
  if (done == records.size()) {
    torn_ = false;
    return true;
  }
  size_t keep = done;  // up to the last complete line written
  while (keep > 0 && records[keep - 1] != '\n') --keep;
  const bool cut = keep == done || (start >= 0 && ::ftruncate(fd_, start + static_cast<off_t>(keep)) == 0);
  if (!cut) {
    torn_ = true;
  } else if (keep > 0) {
    torn_ = false;  // the file ends with a newline again
  }
  lost_ += static_cast<uint64_t>(
      std::count(records.begin() + static_cast<ptrdiff_t>(std::max(keep, separator)), records.end(), '\n'));
  *error = std::strerror(err);
  return false;
}

}  // namespace railscope::profiler
