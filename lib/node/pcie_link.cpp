// SPDX-License-Identifier: Apache-2.0
// PCIe link width and speed from sysfs (pcie_link.h).
#include "railscope/node/pcie_link.h"

#include <fmt/format.h>

#include <charconv>

#include "railscope/node/sysfs.h"

namespace railscope::node {
namespace {

std::string gts(double v) {
  return v == static_cast<int>(v) ? fmt::format("{}", static_cast<int>(v)) : fmt::format("{:g}", v);
}

std::optional<PcieLink> read_at(const Sysfs& sysfs, const std::string& rel) {
  PcieLink l;
  if (auto v = sysfs.read_int(rel + "/current_link_width"); v && *v > 0 && *v <= 32)
    l.width = static_cast<int>(*v);
  if (auto v = sysfs.read_int(rel + "/max_link_width"); v && *v > 0 && *v <= 32)
    l.max_width = static_cast<int>(*v);
  if (auto v = sysfs.read(rel + "/current_link_speed")) l.speed_gts = parse_link_speed_gts(*v);
  if (auto v = sysfs.read(rel + "/max_link_speed")) l.max_speed_gts = parse_link_speed_gts(*v);
  if (l.width == 0 && l.speed_gts == 0) return std::nullopt;
  return l;
}

}  // namespace

std::string PcieLink::text() const {
  return fmt::format("x{} at {} GT/s", width ? std::to_string(width) : "?",
                     speed_gts > 0 ? gts(speed_gts) : "?");
}
std::string PcieLink::max_text() const {
  return fmt::format("x{} at {} GT/s", max_width ? std::to_string(max_width) : "?",
                     max_speed_gts > 0 ? gts(max_speed_gts) : "?");
}

double parse_link_speed_gts(std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || v <= 0 || v > 1000) return 0;
  const std::string_view rest(end, text.data() + text.size() - end);
  return rest.starts_with(" GT/s") ? v : 0;
}

std::optional<PcieLink> read_pcie_link(const Sysfs& sysfs, const std::string& rel) {
  if (auto l = read_at(sysfs, rel)) {
    l->reported_by = "device";
    return l;
  }
  const auto real = sysfs.resolve_relative(rel);  // "devices/pci0000:00/0000:00:01.0/0000:17:00.0"
  if (!real || !real->starts_with("devices/")) return std::nullopt;
  const std::string parent = real->substr(0, real->rfind('/'));       // "devices/pci0000:00/0000:00:01.0"
  if (parent.find('/', 8) == std::string::npos) return std::nullopt;  // the root complex: no port above
  auto l = read_at(sysfs, parent);
  if (l) l->reported_by = parent.substr(parent.rfind('/') + 1);
  return l;
}

}  // namespace railscope::node
