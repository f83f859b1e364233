// SPDX-License-Identifier: Apache-2.0
// DCB answers from fixture files (tests, fake sysfs trees) and the names shared with the netlink reader.
// The file format is documented at parse_dcb_fixture in qos_dcb.h.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <memory>

#include "railscope/core/params.h"
#include "railscope/node/qos_dcb.h"

namespace railscope::node {
namespace {

constexpr size_t kMaxFixtureBytes = 64 * 1024;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(sep, start);
    out.push_back(
        trim(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start)));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

std::optional<int64_t> number(std::string_view text, int64_t max) {
  std::string error;
  return params::parse_int(text, 0, max, &error);
}

std::optional<uint8_t> selector_from(std::string_view name) {
  static constexpr std::pair<std::string_view, uint8_t> kNames[] = {
      {"ethtype", kAppSelEthertype}, {"stream", kAppSelStream}, {"dgram", kAppSelDgram},
      {"any", kAppSelAny},           {"dscp", kAppSelDscp},     {"pcp", kAppSelPcp}};
  for (const auto& [n, v] : kNames)
    if (n == name) return v;
  if (auto v = number(name, 255)) return static_cast<uint8_t>(*v);
  return std::nullopt;
}

std::optional<uint8_t> dcbx_from(std::string_view text) {
  if (auto v = number(text, 255)) return static_cast<uint8_t>(*v);
  uint8_t bits = 0;
  for (auto word : split(text, ',')) {
    if (word == "host")
      bits |= 0x01;
    else if (word == "lld-managed")
      bits |= 0x02;
    else if (word == "cee")
      bits |= 0x04;
    else if (word == "ieee")
      bits |= 0x08;
    else if (word == "static")
      bits |= 0x10;
    else
      return std::nullopt;
  }
  return bits;
}

// Applies one key=value line; false when the value is bad.
bool apply(std::string_view key, std::string_view value, DcbState& s, bool& has_result) {
  if (key == "result") {
    has_result = true;
    if (value == "ok") {
      s.status = DcbStatus::Ok;
    } else if (value == "EOPNOTSUPP") {
      s.status = DcbStatus::NotSupported;
      s.reason = "the device has no DCB support (EOPNOTSUPP)";
    } else if (value == "ENODEV") {
      s.status = DcbStatus::NoDevice;
      s.reason = "no such network interface (ENODEV)";
    } else {
      s.status = DcbStatus::Unknown;
      s.reason = fmt::format("DCB netlink request failed: {}", value);
    }
    return !value.empty();
  }
  if (key == "pfc_cap") {
    auto v = number(value, 8);
    if (v) s.pfc_cap = static_cast<uint8_t>(*v);
    return v.has_value();
  }
  if (key == "pfc_en") {
    uint8_t bits = 0;
    if (value != "none")
      for (auto p : split(value, ',')) {
        auto prio = number(p, 7);
        if (!prio) return false;
        bits = static_cast<uint8_t>(bits | (1u << *prio));
      }
    s.pfc_en = bits;
    return true;
  }
  if (key == "app") {
    const auto parts = split(value, ',');
    if (parts.size() != 3) return false;
    auto sel = selector_from(parts[0]);
    auto proto = number(parts[1], 65535);
    auto prio = number(parts[2], 7);
    if (!sel || !proto || !prio || s.apps.size() >= kMaxDcbApps) return false;
    s.apps.push_back({*sel, static_cast<uint8_t>(*prio), static_cast<uint16_t>(*proto)});
    return true;
  }
  if (key == "dcbx") {
    auto v = dcbx_from(value);
    if (v) s.dcbx = v;
    return v.has_value();
  }
  return false;
}

class FixtureDcbSource final : public DcbSource {
 public:
  explicit FixtureDcbSource(std::string root) : root_(std::move(root)) {}
  DcbState read(std::string_view netdev) const override {
    DcbState s;
    if (netdev.empty() || netdev == "." || netdev == ".." || netdev.find('/') != std::string_view::npos) {
      s.reason = "not a valid interface name";
      return s;
    }
    const std::string path = fmt::format("{}/railscope-fixture/dcb/{}", root_, netdev);
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "re"), &std::fclose);
    if (!f) {
      s.reason = "no DCB fixture for this interface";
      return s;
    }
    std::string text(kMaxFixtureBytes + 1, '\0');
    text.resize(std::fread(text.data(), 1, text.size(), f.get()));
    if (text.size() > kMaxFixtureBytes) {
      s.reason = "DCB fixture larger than 64 KiB";
      return s;
    }
    return parse_dcb_fixture(text);
  }

 private:
  std::string root_;
};

}  // namespace

std::string_view to_string(DcbStatus s) {
  switch (s) {
    case DcbStatus::Ok: return "ok";
    case DcbStatus::NotSupported: return "not_supported";
    case DcbStatus::NoDevice: return "no_device";
    default: return "unknown";
  }
}

std::string dcbx_text(uint8_t dcbx) {
  static constexpr std::pair<uint8_t, std::string_view> kBits[] = {
      {0x01, "host"}, {0x02, "lld-managed"}, {0x04, "cee"}, {0x08, "ieee"}, {0x10, "static"}};
  std::string out;
  for (const auto& [bit, name] : kBits)
    if (dcbx & bit) out += (out.empty() ? "" : ",") + std::string(name);
  if ((dcbx & ~0x1f) != 0) out += fmt::format("{}0x{:02x}", out.empty() ? "" : ",", dcbx & ~0x1f);
  return out.empty() ? "none" : out;
}

std::string app_selector_text(uint8_t selector) {
  switch (selector) {
    case kAppSelEthertype: return "ethtype";
    case kAppSelStream: return "stream";
    case kAppSelDgram: return "dgram";
    case kAppSelAny: return "any";
    case kAppSelDscp: return "dscp";
    case kAppSelPcp: return "pcp";
    default: return std::to_string(selector);
  }
}

DcbState parse_dcb_fixture(std::string_view text) {
  DcbState s;
  bool has_result = false;
  int line_no = 0;
  for (auto line : split(text, '\n')) {
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = trim(line.substr(0, hash));
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos ||
        !apply(trim(line.substr(0, eq)), trim(line.substr(eq + 1)), s, has_result)) {
      DcbState bad;
      bad.reason = fmt::format("bad DCB fixture line {}", line_no);
      return bad;
    }
  }
  if (!has_result) {
    DcbState bad;
    bad.reason = "DCB fixture without a result= line";
    return bad;
  }
  if (s.status != DcbStatus::Ok) {  // an error answer carries no attributes
    s.pfc_cap.reset();
    s.pfc_en.reset();
    s.apps.clear();
    s.dcbx.reset();
  }
  return s;
}

std::unique_ptr<DcbSource> make_fixture_dcb_source(std::string sysfs_root) {
  return std::make_unique<FixtureDcbSource>(std::move(sysfs_root));
}

}  // namespace railscope::node
