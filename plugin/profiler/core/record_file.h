// SPDX-License-Identifier: Apache-2.0
// The JSONL profile as the monitor appends to it: whole records only. A write that fails part-way (a full
// disk, a file size limit) is cut back to the last complete line, so the file never holds a record torn in
// two or two records merged on one line; the records that could not be written are counted so the monitor
// can say how many were lost, and the next append tries again (space may have come back).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace railscope::profiler {

class RecordFile {
 public:
  RecordFile() = default;
  ~RecordFile() { close(); }
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;

  // Opens path for appending (railscope/core/safe_file.h: never through a symbolic link); false with
  // *error set.
  bool open(const std::string& path, std::string* error);
  bool is_open() const { return fd_ >= 0; }
  void close();

  // Appends records, each a line ending in '\n'. false with *error set when not all of them were written:
  // the file then ends with the last record written whole, and the others are added to lost().
  bool append(std::string_view records, std::string* error);
  // Records lost since the last take_lost().
  uint64_t lost() const { return lost_; }
  uint64_t take_lost();

 private:
  int fd_ = -1;
  uint64_t lost_ = 0;
  // The file could not be cut back after a partial write: the next append starts with a newline, so the
  // torn piece stays a line of its own (a reader skips it) instead of merging with the next record.
  bool torn_ = false;
};

}  // namespace railscope::profiler
