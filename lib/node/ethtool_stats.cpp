// SPDX-License-Identifier: Apache-2.0
// ethtool statistics and link settings through the SIOCETHTOOL ioctl (ethtool_stats.h).
// The commands and structures are the kernel's uapi (include/uapi/linux/ethtool.h) as `ethtool -S` and
// `ethtool` use them (net/ethtool/ioctl.c answers them). Two kernel behaviours shape the code:
//  - ETHTOOL_GSTRINGS and ETHTOOL_GSTATS write as many entries as the device has *now*, whatever length
//    the caller passed; so the count is asked (ETHTOOL_GSSET_INFO) right before and the buffer has room
//    to spare, and an answer whose count differs from the names is refused;
//  - ETHTOOL_GLINKSETTINGS is a handshake: a first call with link_mode_masks_nwords 0 returns -N, the
//    second call with N returns the supported/advertised/peer bitmaps of N 32-bit words each.
#include "railscope/node/ethtool_stats.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "railscope/node/sysfs.h"

namespace railscope::node {
namespace {

// More statistics than any driver publishes for one port's port-wide view; mlx5 with 256 channels
// publishes ~15000 (mostly per-channel). A bound on what one read may allocate.
constexpr uint32_t kMaxStats = 65536;

class Socket {
 public:
  Socket() : fd_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  // The ioctl with `data` as ifr_data; false on any error (no such device, EOPNOTSUPP ...).
  bool ethtool(const std::string& ifname, void* data) const {
    if (fd_ < 0 || !valid_ifname(ifname)) return false;
    ifreq ifr{};
    std::memcpy(ifr.ifr_name, ifname.data(), ifname.size());
    ifr.ifr_data = static_cast<char*>(data);
    return ::ioctl(fd_, SIOCETHTOOL, &ifr) == 0;
  }

 private:
  int fd_;
};

// Buffers are vectors of 64-bit words so every uapi structure placed at their start is aligned.
std::vector<uint64_t> words_for(size_t bytes) { return std::vector<uint64_t>((bytes + 7) / 8, 0); }

class IoctlSource final : public EthtoolSource {
 public:
  std::vector<std::string> stat_names(const std::string& ifname) override {
    return strings(ifname, ETH_SS_STATS);
  }

  std::optional<std::vector<uint64_t>> stat_values(const std::string& ifname, size_t expected) override {
    const auto now = set_count(ifname, ETH_SS_STATS);
    if (!now || *now == 0 || *now != expected) return std::nullopt;
    const size_t room = static_cast<size_t>(*now) * 2 + 256;  // the device may grow between the calls
    auto buf = words_for(sizeof(ethtool_stats) + room * sizeof(uint64_t));
    ethtool_stats head{};
    head.cmd = ETHTOOL_GSTATS;
    head.n_stats = static_cast<uint32_t>(*now);
    std::memcpy(buf.data(), &head, sizeof head);
    if (!socket_.ethtool(ifname, buf.data())) return std::nullopt;
    std::memcpy(&head, buf.data(), sizeof head);
    if (head.n_stats != expected) return std::nullopt;
    std::vector<uint64_t> values(expected);
    std::memcpy(values.data(), reinterpret_cast<const char*>(buf.data()) + sizeof head,
                expected * sizeof(uint64_t));
    return values;
  }

  std::optional<EthtoolLinkSettings> link_settings(const std::string& ifname) override {
    ethtool_link_settings head{};
    head.cmd = ETHTOOL_GLINKSETTINGS;
    auto probe = words_for(sizeof head + 3 * 127 * sizeof(uint32_t));
    std::memcpy(probe.data(), &head, sizeof head);
    if (!socket_.ethtool(ifname, probe.data())) return std::nullopt;
    std::memcpy(&head, probe.data(), sizeof head);
    if (head.link_mode_masks_nwords >= 0 || head.cmd != ETHTOOL_GLINKSETTINGS) return std::nullopt;
    const int nwords = -head.link_mode_masks_nwords;
    head = {};
    head.cmd = ETHTOOL_GLINKSETTINGS;
    head.link_mode_masks_nwords = static_cast<int8_t>(nwords);
    auto buf = words_for(sizeof head + 3 * static_cast<size_t>(nwords) * sizeof(uint32_t));
    std::memcpy(buf.data(), &head, sizeof head);
    if (!socket_.ethtool(ifname, buf.data())) return std::nullopt;
    std::memcpy(&head, buf.data(), sizeof head);
    if (head.link_mode_masks_nwords != nwords) return std::nullopt;
    std::vector<uint32_t> supported(static_cast<size_t>(nwords));
    std::memcpy(supported.data(), reinterpret_cast<const char*>(buf.data()) + sizeof head,
                supported.size() * sizeof(uint32_t));
    EthtoolLinkSettings out;
    if (head.speed != 0 && head.speed != static_cast<uint32_t>(SPEED_UNKNOWN)) out.speed_mbps = head.speed;
    // Bit i of the supported mask is link mode i; ETH_SS_LINK_MODES names them ("400000baseCR4/Full").
    const auto names = strings(ifname, ETH_SS_LINK_MODES);
    for (size_t bit = 0; bit < names.size() && bit / 32 < supported.size(); ++bit) {
      if ((supported[bit / 32] >> (bit % 32) & 1u) == 0) continue;
      out.supported.push_back(names[bit]);
      out.max_supported_mbps = std::max(out.max_supported_mbps, link_mode_mbps(names[bit]));
    }
    return out;
  }

 private:
  std::optional<uint32_t> set_count(const std::string& ifname, uint32_t set) const {
    auto buf = words_for(sizeof(ethtool_sset_info) + sizeof(uint32_t));
    ethtool_sset_info head{};
    head.cmd = ETHTOOL_GSSET_INFO;
    head.sset_mask = 1ULL << set;
    std::memcpy(buf.data(), &head, sizeof head);
    if (!socket_.ethtool(ifname, buf.data())) return std::nullopt;
    std::memcpy(&head, buf.data(), sizeof head);
    if ((head.sset_mask & (1ULL << set)) == 0) return 0u;
    uint32_t n = 0;
    std::memcpy(&n, reinterpret_cast<const char*>(buf.data()) + sizeof head, sizeof n);
    if (n > kMaxStats) return std::nullopt;
    return n;
  }

  std::vector<std::string> strings(const std::string& ifname, uint32_t set) const {
    const auto n = set_count(ifname, set);
    if (!n || *n == 0) return {};
    const size_t room = static_cast<size_t>(*n) * 2 + 256;
    auto buf = words_for(sizeof(ethtool_gstrings) + room * ETH_GSTRING_LEN);
    ethtool_gstrings head{};
    head.cmd = ETHTOOL_GSTRINGS;
    head.string_set = set;
    head.len = *n;
    std::memcpy(buf.data(), &head, sizeof head);
    if (!socket_.ethtool(ifname, buf.data())) return {};
    std::memcpy(&head, buf.data(), sizeof head);
    if (head.len != *n) return {};  // changed between the two calls: not this time
    std::vector<std::string> out;
    out.reserve(*n);
    const char* data = reinterpret_cast<const char*>(buf.data()) + sizeof head;
    for (uint32_t i = 0; i < *n; ++i) {
      const char* s = data + static_cast<size_t>(i) * ETH_GSTRING_LEN;
      out.emplace_back(s, ::strnlen(s, ETH_GSTRING_LEN));
    }
    return out;
  }

  Socket socket_;
};

bool digits_then(std::string_view s, size_t* i) {
  const size_t start = *i;
  while (*i < s.size() && s[*i] >= '0' && s[*i] <= '9') ++*i;
  return *i > start;
}

}  // namespace

std::unique_ptr<EthtoolSource> make_ioctl_ethtool_source() { return std::make_unique<IoctlSource>(); }

std::unique_ptr<EthtoolSource> ethtool_source_for(const Sysfs& sysfs) {
  if (sysfs.is_real()) return make_ioctl_ethtool_source();
  return make_fixture_ethtool_source(sysfs.path("railscope-fixture/ethtool"));
}

int64_t link_mode_mbps(std::string_view mode) {
  int64_t v = 0;
  size_t i = 0;
  for (; i < mode.size() && i < 9 && mode[i] >= '0' && mode[i] <= '9'; ++i) v = v * 10 + (mode[i] - '0');
  if (i == 0 || !mode.substr(i).starts_with("base")) return 0;
  return v;
}

bool is_port_wide_stat(std::string_view name) {
  // Per-queue/channel statistics: <prefix><digits>_... with prefix rx, tx, ch, xdpsq, rx_xsk, tx_xsk ...
  // veth's per-queue XDP statistics are rx_queue_<n>_xdp_packets, tx_queue_<n>_xdp_xmit.
  for (std::string_view prefix :
       {"rx", "tx", "ch", "xdpsq", "rxq", "txq", "qos_tx", "rx_queue_", "tx_queue_"}) {
    if (!name.starts_with(prefix)) continue;
    size_t i = prefix.size();
    if (digits_then(name, &i) && i < name.size() && name[i] == '_') return false;
  }
  // mlx5's PTP and HTB (QoS) queue groups.
  return !name.starts_with("ptp_") && !name.starts_with("qos_");
}

bool valid_ifname(std::string_view ifname) {
  return !ifname.empty() && ifname.size() < IFNAMSIZ && ifname != "." && ifname != ".." &&
         ifname.find('/') == std::string_view::npos && ifname.find('\0') == std::string_view::npos;
}

std::vector<Counter> read_ethtool_counters(EthtoolSource& source, const std::string& ifname) {
  const auto names = source.stat_names(ifname);
  if (names.empty()) return {};
  const auto values = source.stat_values(ifname, names.size());
  if (!values) return {};
  std::vector<Counter> out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!is_port_wide_stat(names[i])) continue;
    out.push_back(Counter{names[i], counter_category(names[i]), (*values)[i], false, CounterSource::Ethtool});
  }
  std::sort(out.begin(), out.end(), [](const Counter& a, const Counter& b) { return a.name < b.name; });
  return out;
}

}  // namespace railscope::node
