// SPDX-License-Identifier: Apache-2.0
#include "railscope/core/params.h"

#include <strings.h>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <set>

#include "railscope/core/diagnosis.h"
#include "railscope/core/log.h"

namespace railscope::params {

namespace detail {
std::span<const Spec> registry_entries();  // params_registry.cpp
}

namespace {

std::mutex g_reported_mutex;
std::set<std::string, std::less<>>& reported() {
  static std::set<std::string, std::less<>> names;
  return names;
}

void report_once(std::string_view name, const std::string& message) {
  {
    std::lock_guard lock(g_reported_mutex);
    if (!reported().emplace(name).second) return;
  }
  RS_WARN("{}", diag::one_line(diag::make("config.bad_env", message)));
}

const Spec& spec_or_report(std::string_view name) {
  static const Spec kUnknown{"?", Type::String, "", 0, 0, "all", "unregistered"};
  if (const Spec* s = find(name)) return *s;
  report_once(name, fmt::format("internal: variable {} is not in the params registry", name));
  return kUnknown;
}

}  // namespace

std::span<const Spec> registry() { return detail::registry_entries(); }

const Spec* find(std::string_view name) {
  auto entries = registry();
  auto it = std::find_if(entries.begin(), entries.end(), [&](const Spec& s) { return s.name == name; });
  return it == entries.end() ? nullptr : &*it;
}

std::optional<int64_t> parse_int(std::string_view text, int64_t min, int64_t max, std::string* error) {
  std::string s(text);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t start = 0;
  while (start < s.size() && (s[start] == ' ' || s[start] == '\t')) ++start;
  s = s.substr(start);
  if (s.empty()) {
    if (error) *error = "empty value";
    return std::nullopt;
  }
  // Decimal, or hex after 0x/0X, with an optional sign; a leading 0 is still decimal ("010" is 10, not
  // strtoll's octal 8).
  std::string_view digits = s;
  const bool negative = !digits.empty() && digits.front() == '-';
  if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) digits.remove_prefix(1);
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  uint64_t magnitude = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  const uint64_t limit = negative ? uint64_t{1} << 63 : uint64_t{INT64_MAX};
  if (digits.empty() || digits.front() == '+' || digits.front() == '-' || ec != std::errc() ||
      end != digits.data() + digits.size() || magnitude > limit) {
    if (error) *error = fmt::format("'{}' is not an integer (decimal, or hex after 0x)", s);
    return std::nullopt;
  }
  const int64_t v = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  if (v < min || v > max) {
    if (error) *error = fmt::format("{} is outside [{}, {}]", v, min, max);
    return std::nullopt;
  }
  return v;
}

std::optional<bool> parse_bool(std::string_view text, std::string* error) {
  const std::string s(text);
  for (const char* t : {"1", "true", "yes", "on"})
    if (strcasecmp(s.c_str(), t) == 0) return true;
  for (const char* f : {"0", "false", "no", "off"})
    if (strcasecmp(s.c_str(), f) == 0) return false;
  if (error) *error = fmt::format("'{}' is not a boolean (use 1/0, true/false, yes/no, on/off)", s);
  return std::nullopt;
}

std::optional<std::string> raw(std::string_view name) {
  const std::string key(name);
  const char* v = std::getenv(key.c_str());
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

int64_t get_int(std::string_view name) {
  const Spec& spec = spec_or_report(name);
  std::string unused;
  const int64_t def = parse_int(spec.default_value, INT64_MIN, INT64_MAX, &unused).value_or(0);
  auto value = raw(name);
  if (!value) return def;
  std::string error;
  if (auto v = parse_int(*value, spec.min, spec.max, &error)) return *v;
  report_once(name, fmt::format("{}={}: {}; using the default {}", name, *value, error, def));
  return def;
}

bool get_bool(std::string_view name) {
  const Spec& spec = spec_or_report(name);
  std::string unused;
  const bool def = parse_bool(spec.default_value, &unused).value_or(false);
  auto value = raw(name);
  if (!value) return def;
  std::string error;
  if (auto v = parse_bool(*value, &error)) return *v;
  report_once(name, fmt::format("{}={}: {}; using the default {}", name, *value, error, def ? 1 : 0));
  return def;
}

std::string get_string(std::string_view name) {
  const Spec& spec = spec_or_report(name);
  return raw(name).value_or(std::string(spec.default_value));
}

void reset_reported_for_tests() {
  std::lock_guard lock(g_reported_mutex);
  reported().clear();
}

}  // namespace railscope::params
