// SPDX-License-Identifier: Apache-2.0
// Repeated snapshots of one port's health counters, cheap enough to take every second: the counter files
// under counters/ and hw_counters/ are listed and opened once and re-read with pread (a sysfs attribute
// read from offset 0 is produced afresh by the kernel), and the netdev's ethtool statistic names are
// fetched once, so a snapshot is one pread per file and one ETHTOOL_GSTATS call. Deltas between two
// snapshots are counter_deltas() (port_counters.h), which handles resets.
// A process out of file descriptors (EMFILE) keeps fewer open: the rest are opened per read, and one kept
// descriptor is given back so those reads can happen. Not thread-safe: one thread samples a given
// PortSampler.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "railscope/node/port_counters.h"

namespace railscope::node {

class EthtoolSource;
class Sysfs;

class PortSampler {
 public:
  // `netdev` empty: no ethtool statistics (InfiniBand). `ethtool` may be null (none); it must outlive
  // the sampler.
  PortSampler(const Sysfs& sysfs, std::string device, int port, std::string netdev, EthtoolSource* ethtool);
  ~PortSampler();
  PortSampler(PortSampler&& other) noexcept;
  PortSampler& operator=(PortSampler&& other) noexcept;
  PortSampler(const PortSampler&) = delete;
  PortSampler& operator=(const PortSampler&) = delete;

  // One snapshot; files that cannot be read this time are left out of it.
  PortCounters sample();

  const std::string& device() const { return device_; }
  int port() const { return port_; }
  size_t files() const { return files_.size(); }  // counter files found at construction
  size_t kept_open() const;                       // of which held open (the rest opened per read)

  // At most this many files per folder are followed (no provider publishes more than ~100).
  static constexpr size_t kMaxFilesPerFolder = 512;

 private:
  struct File {
    std::string name;
    std::string path;  // for reopening when the descriptor could not be kept (EMFILE)
    int fd = -1;
    bool hw = false;
    CounterCategory category = CounterCategory::Other;
  };
  void close_all();
  bool load_ethtool_names();

  std::string device_;
  int port_ = 0;
  std::string netdev_;
  EthtoolSource* ethtool_ = nullptr;
  std::vector<File> files_;
  std::vector<std::string> ethtool_names_;           // all of the netdev's names, in the device's order
  std::vector<size_t> ethtool_kept_;                 // indices of the port-wide ones
  std::vector<CounterCategory> ethtool_categories_;  // their categories, looked up once
};

}  // namespace railscope::node
