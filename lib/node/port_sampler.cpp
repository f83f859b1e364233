// SPDX-License-Identifier: Apache-2.0
// Snapshots of a port through kept file descriptors (port_sampler.h).
#include "railscope/node/port_sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <utility>

#include "railscope/node/ethtool_stats.h"
#include "railscope/node/sysfs.h"

namespace railscope::node {
namespace {

// A counter file holds one decimal number (at most 20 digits) and a newline.
std::optional<uint64_t> read_value(int fd) {
  char buf[64];
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  if (n <= 0 || static_cast<size_t>(n) == sizeof buf) return std::nullopt;
  return parse_counter_value(std::string_view(buf, static_cast<size_t>(n)));
}

std::optional<uint64_t> read_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  auto v = read_value(fd);
  ::close(fd);
  return v;
}

}  // namespace

PortSampler::PortSampler(const Sysfs& sysfs, std::string device, int port, std::string netdev,
                         EthtoolSource* ethtool)
    : device_(std::move(device)), port_(port), netdev_(std::move(netdev)), ethtool_(ethtool) {
  const std::string base = fmt::format("class/infiniband/{}/ports/{}", device_, port_);
  bool out_of_fds = false;
  for (const bool hw : {false, true}) {
    const std::string folder = base + (hw ? "/hw_counters" : "/counters");
    size_t n = 0;
    for (const auto& name : sysfs.list(folder)) {
      if (++n > kMaxFilesPerFolder) break;
      File f;
      f.name = name;
      f.path = sysfs.path(folder + "/" + name);
      f.hw = hw;
      f.category = counter_category(name);
      f.fd = out_of_fds ? -1 : ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
      if (f.fd < 0 && !out_of_fds) {
        if (errno != EMFILE && errno != ENFILE) continue;  // unreadable: not a counter we can read
        // The process is out of descriptors: this file and the rest are opened per read, and the last
        // kept one is given back so that those reads (and the process) have a descriptor to use.
        out_of_fds = true;
        for (auto it = files_.rbegin(); it != files_.rend(); ++it)
          if (it->fd >= 0) {
            ::close(it->fd);
            it->fd = -1;
            break;
          }
      }
      files_.push_back(std::move(f));
    }
  }
  if (!valid_ifname(netdev_)) netdev_.clear();
  if (ethtool_ != nullptr && !netdev_.empty()) load_ethtool_names();
}

PortSampler::~PortSampler() { close_all(); }

PortSampler::PortSampler(PortSampler&& other) noexcept
    : device_(std::move(other.device_)),
      port_(other.port_),
      netdev_(std::move(other.netdev_)),
      ethtool_(other.ethtool_),
      files_(std::move(other.files_)),
      ethtool_names_(std::move(other.ethtool_names_)),
      ethtool_kept_(std::move(other.ethtool_kept_)),
      ethtool_categories_(std::move(other.ethtool_categories_)) {
  other.files_.clear();
}

PortSampler& PortSampler::operator=(PortSampler&& other) noexcept {
  if (this != &other) {
    close_all();
    device_ = std::move(other.device_);
    port_ = other.port_;
    netdev_ = std::move(other.netdev_);
    ethtool_ = other.ethtool_;
    files_ = std::move(other.files_);
    ethtool_names_ = std::move(other.ethtool_names_);
    ethtool_kept_ = std::move(other.ethtool_kept_);
    ethtool_categories_ = std::move(other.ethtool_categories_);
    other.files_.clear();
  }
  return *this;
}

void PortSampler::close_all() {
  for (auto& f : files_)
    if (f.fd >= 0) {
      ::close(f.fd);
      f.fd = -1;
    }
}

size_t PortSampler::kept_open() const {
  size_t n = 0;
  for (const auto& f : files_) n += f.fd >= 0 ? 1 : 0;
  return n;
}

bool PortSampler::load_ethtool_names() {
  ethtool_names_ = ethtool_->stat_names(netdev_);
  ethtool_kept_.clear();
  ethtool_categories_.clear();
  for (size_t i = 0; i < ethtool_names_.size(); ++i)
    if (is_port_wide_stat(ethtool_names_[i])) {
      ethtool_kept_.push_back(i);
      ethtool_categories_.push_back(counter_category(ethtool_names_[i]));
    }
  return !ethtool_names_.empty();
}

PortCounters PortSampler::sample() {
  PortCounters pc;
  pc.device = device_;
  pc.port = port_;
  pc.netdev = netdev_;
  pc.counters.reserve(files_.size() + ethtool_kept_.size());
  for (const auto& f : files_) {
    const auto v = f.fd >= 0 ? read_value(f.fd) : read_path(f.path);
    if (!v) continue;
    pc.counters.push_back(
        Counter{f.name, f.category, *v, f.hw, f.hw ? CounterSource::Hw : CounterSource::Port});
  }
  if (ethtool_ != nullptr && !netdev_.empty()) {
    auto values =
        ethtool_names_.empty() ? std::nullopt : ethtool_->stat_values(netdev_, ethtool_names_.size());
    if (!values && load_ethtool_names())  // the device's list changed (channels): names once more
      values = ethtool_->stat_values(netdev_, ethtool_names_.size());
    if (values) {
      pc.ethtool_available = true;
      for (const size_t i : ethtool_kept_)
        pc.counters.push_back(Counter{ethtool_names_[i], counter_category(ethtool_names_[i]), (*values)[i],
                                      false, CounterSource::Ethtool});
    }
  }
  sort_counters(&pc.counters);
  return pc;
}

}  // namespace railscope::node
