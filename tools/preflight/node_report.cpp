// SPDX-License-Identifier: Apache-2.0
// Node reports to and from JSON; the reading side checks every field (see node_report.h).
#include "node_report.h"

#include <fmt/format.h>

#include <cctype>

namespace railscope::preflight {
namespace {

using nlohmann::json;

bool clean_text(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

struct Reader {
  std::string* error;
  std::string where;

  bool fail(const std::string& field, const std::string& why) {
    *error = fmt::format("{}{}: {}", where, field, why);
    return false;
  }
  bool str(const json& o, const char* key, std::string* out, size_t max, bool required = true) {
    const auto it = o.find(key);
    if (it == o.end() || it->is_null()) return required ? fail(key, "missing") : true;
    if (!it->is_string()) return fail(key, "not a string");
    const auto& s = it->get_ref<const std::string&>();
    if (s.size() > max) return fail(key, fmt::format("longer than {} bytes", max));
    if (!clean_text(s)) return fail(key, "control characters");
    *out = s;
    return true;
  }
  template <typename T>
  bool num(const json& o, const char* key, T* out, int64_t lo, int64_t hi) {
    const auto it = o.find(key);
    if (it == o.end()) return fail(key, "missing");
    if (!it->is_number_integer()) return fail(key, "not an integer");
    const int64_t v = it->is_number_unsigned() && it->get<uint64_t>() > uint64_t(INT64_MAX)
                          ? INT64_MAX
                          : it->get<int64_t>();
    if (v < lo || v > hi) return fail(key, fmt::format("{} is out of range {}..{}", v, lo, hi));
    *out = static_cast<T>(v);
    return true;
  }
};

bool env_name_ok(const std::string& n) {
  if (n.size() < 6 || n.size() > 64 || n.rfind("NCCL_", 0) != 0) return false;
  for (char c : n)
    if (!(std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
          c == '_'))
      return false;
  return true;
}

}  // namespace

bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ei = i;
      size_t ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      // Compare the numbers without converting (any length): fewer significant digits is smaller.
      size_t zi = i;
      size_t zj = j;
      while (zi + 1 < ei && a[zi] == '0') ++zi;
      while (zj + 1 < ej && b[zj] == '0') ++zj;
      if (ei - zi != ej - zj) return ei - zi < ej - zj;
      const int c = a.compare(zi, ei - zi, b, zj, ej - zj);
      if (c != 0) return c < 0;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

json to_json(const NodeReport& r) {
  json nics = json::array();
  for (const auto& n : r.nics)
    nics.push_back({{"device", n.device},
                    {"port", n.port},
                    {"state", n.state},
                    {"link_layer", n.link_layer},
                    {"netdev", n.netdev},
                    {"active_mtu", n.active_mtu},
                    {"speed_mbps", n.speed_mbps},
                    {"fw_ver", n.fw_ver},
                    {"gid_type", n.gid_type},
                    {"gid_family", n.gid_family},
                    {"ipv4", n.ipv4},
                    {"subnet", n.subnet}});
  json findings = json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"id", f.id}, {"severity", f.severity}, {"detail", f.detail}});
  return {{"schema", "railscope.preflight.node/1"},
          {"rank", r.rank},
          {"host", r.host},
          {"nics", nics},
          {"nccl_env", r.nccl_env},
          {"findings", findings},
          {"doctor_exit", r.doctor_exit}};
}

std::optional<NodeReport> node_report_from_json(const json& j, std::string* error) {
  Reader rd{error, ""};
  NodeReport r;
  if (!j.is_object()) return rd.fail("report", "not a JSON object"), std::nullopt;
  std::string schema;
  if (!rd.str(j, "schema", &schema, kMaxField)) return std::nullopt;
  if (schema != "railscope.preflight.node/1")
    return rd.fail("schema", "not railscope.preflight.node/1"), std::nullopt;
  if (!rd.num(j, "rank", &r.rank, 0, 65535) || !rd.str(j, "host", &r.host, kMaxField) ||
      !rd.num(j, "doctor_exit", &r.doctor_exit, 0, 2))
    return std::nullopt;
  if (r.host.empty()) return rd.fail("host", "empty"), std::nullopt;

  const auto nics = j.find("nics");
  if (nics == j.end() || !nics->is_array()) return rd.fail("nics", "missing or not an array"), std::nullopt;
  if (nics->size() > kMaxNics) return rd.fail("nics", fmt::format("more than {}", kMaxNics)), std::nullopt;
  for (size_t i = 0; i < nics->size(); ++i) {
    const json& o = (*nics)[i];
    Reader nr{error, fmt::format("nics[{}].", i)};
    if (!o.is_object()) return nr.fail("", "not an object"), std::nullopt;
    NicSummary n;
    if (!nr.str(o, "device", &n.device, 64) || !nr.num(o, "port", &n.port, 1, 255) ||
        !nr.str(o, "state", &n.state, 32) || !nr.str(o, "link_layer", &n.link_layer, 32) ||
        !nr.str(o, "netdev", &n.netdev, 64) || !nr.num(o, "active_mtu", &n.active_mtu, 0, 65536) ||
        !nr.num(o, "speed_mbps", &n.speed_mbps, 0, int64_t(1) << 40) || !nr.str(o, "fw_ver", &n.fw_ver, 64) ||
        !nr.str(o, "gid_type", &n.gid_type, 32) || !nr.str(o, "gid_family", &n.gid_family, 32) ||
        !nr.str(o, "ipv4", &n.ipv4, 64) || !nr.str(o, "subnet", &n.subnet, 64))
      return std::nullopt;
    if (n.device.empty()) return nr.fail("device", "empty"), std::nullopt;
    r.nics.push_back(std::move(n));
  }

  const auto env = j.find("nccl_env");
  if (env == j.end() || !env->is_object())
    return rd.fail("nccl_env", "missing or not an object"), std::nullopt;
  if (env->size() > kMaxEnv) return rd.fail("nccl_env", fmt::format("more than {}", kMaxEnv)), std::nullopt;
  for (const auto& [k, v] : env->items()) {
    if (!env_name_ok(k)) return rd.fail("nccl_env", "a name that is not NCCL_[A-Z0-9_]"), std::nullopt;
    if (!v.is_string()) return rd.fail("nccl_env." + k, "not a string"), std::nullopt;
    const auto& s = v.get_ref<const std::string&>();
    if (s.size() > kMaxField || !clean_text(s))
      return rd.fail("nccl_env." + k, "too long or control characters"), std::nullopt;
    r.nccl_env[k] = s;
  }

  const auto findings = j.find("findings");
  if (findings == j.end() || !findings->is_array())
    return rd.fail("findings", "missing or not an array"), std::nullopt;
  if (findings->size() > kMaxFindings)
    return rd.fail("findings", fmt::format("more than {}", kMaxFindings)), std::nullopt;
  for (size_t i = 0; i < findings->size(); ++i) {
    const json& o = (*findings)[i];
    Reader fr{error, fmt::format("findings[{}].", i)};
    if (!o.is_object()) return fr.fail("", "not an object"), std::nullopt;
    RemoteFinding f;
    if (!fr.str(o, "id", &f.id, 64) || !fr.str(o, "severity", &f.severity, 16) ||
        !fr.str(o, "detail", &f.detail, kMaxText))
      return std::nullopt;
    if (f.severity != "info" && f.severity != "warning" && f.severity != "error" && f.severity != "ok")
      return fr.fail("severity", "not ok/info/warning/error"), std::nullopt;
    r.findings.push_back(std::move(f));
  }
  return r;
}

}  // namespace railscope::preflight
