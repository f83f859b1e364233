// SPDX-License-Identifier: Apache-2.0
// The fixture ethtool source (ethtool_stats.h): what `ethtool -S <if>` and `ethtool <if>` print, saved as
// files under <root>/railscope-fixture/ethtool/<ifname>/{stats,link}, so tests can lay out a ConnectX
// port's statistics next to its fake sysfs tree. Read with the same limits as sysfs (bounded size); bad
// lines are skipped.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "railscope/node/ethtool_stats.h"

namespace railscope::node {
namespace {

constexpr size_t kMaxFileBytes = 1 << 20;

std::optional<std::string> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > kMaxFileBytes) {
      out.resize(kMaxFileBytes);
      break;
    }
  }
  ::close(fd);
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

template <typename F>
void for_each_line(std::string_view text, F&& f) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    f(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

struct Stat {
  std::string name;
  uint64_t value;
};

class FixtureSource final : public EthtoolSource {
 public:
  explicit FixtureSource(std::string dir) : dir_(std::move(dir)) {}

  std::vector<std::string> stat_names(const std::string& ifname) override {
    std::vector<std::string> out;
    for (auto& s : stats(ifname)) out.push_back(std::move(s.name));
    return out;
  }

  std::optional<std::vector<uint64_t>> stat_values(const std::string& ifname, size_t expected) override {
    const auto all = stats(ifname);
    if (all.empty() || all.size() != expected) return std::nullopt;
    std::vector<uint64_t> out;
    for (const auto& s : all) out.push_back(s.value);
    return out;
  }

  std::optional<EthtoolLinkSettings> link_settings(const std::string& ifname) override {
    if (!valid_ifname(ifname)) return std::nullopt;
    const auto text = read_file(dir_ + "/" + ifname + "/link");
    if (!text) return std::nullopt;
    EthtoolLinkSettings out;
    bool in_modes = false;  // "Supported link modes:" continues on lines without a colon
    for_each_line(*text, [&](std::string_view line) {
      const size_t colon = line.find(':');
      std::string_view modes;
      if (colon == std::string_view::npos) {
        if (in_modes) modes = line;
      } else {
        const std::string_view key = trim(line.substr(0, colon));
        const std::string_view value = trim(line.substr(colon + 1));
        in_modes = key == "Supported link modes";
        if (in_modes) modes = value;
        if (key == "Speed") {
          if (auto v = parse_counter_value(value.substr(0, value.find("Mb/s"))); v && *v < 100000000)
            out.speed_mbps = static_cast<int64_t>(*v);
        }
      }
      for (size_t i = 0; i < modes.size();) {
        while (i < modes.size() && std::isspace(static_cast<unsigned char>(modes[i]))) ++i;
        size_t j = i;
        while (j < modes.size() && !std::isspace(static_cast<unsigned char>(modes[j]))) ++j;
        if (j > i) {
          const std::string_view mode = modes.substr(i, j - i);
          if (link_mode_mbps(mode) > 0) {
            out.supported.emplace_back(mode);
            out.max_supported_mbps = std::max(out.max_supported_mbps, link_mode_mbps(mode));
          }
        }
        i = j;
      }
    });
    return out;
  }

 private:
  // "     rx_prio3_pause: 12" lines; the "NIC statistics:" heading and bad lines are skipped.
  std::vector<Stat> stats(const std::string& ifname) const {
    std::vector<Stat> out;
    if (!valid_ifname(ifname)) return out;
    const auto text = read_file(dir_ + "/" + ifname + "/stats");
    if (!text) return out;
    for_each_line(*text, [&](std::string_view line) {
      const size_t colon = line.rfind(':');
      if (colon == std::string_view::npos) return;
      const std::string_view name = trim(line.substr(0, colon));
      const auto value = parse_counter_value(line.substr(colon + 1));
      if (name.empty() || !value) return;
      out.push_back(Stat{std::string(name), *value});
    });
    return out;
  }

  std::string dir_;
};

}  // namespace

std::unique_ptr<EthtoolSource> make_fixture_ethtool_source(std::string dir) {
  return std::make_unique<FixtureSource>(std::move(dir));
}

}  // namespace railscope::node
