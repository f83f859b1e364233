// SPDX-License-Identifier: Apache-2.0
// The one registry of every environment variable railscope reads (its own RAILSCOPE_* ones and the
// NCCL_* ones it honours with NCCL's meaning). Each is declared once, with type, default, range and
// a description; the README's table is checked against this list by a test.
// Reads validate: a bad value is reported once (diagnosis config.bad_env) and the default is used.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace railscope::params {

enum class Type { Int, Bool, String, Path };

struct Spec {
  std::string_view name;
  Type type;
  std::string_view default_value;  // as text; "" = unset
  int64_t min = 0;                 // Int only
  int64_t max = 0;                 // Int only
  std::string_view component;      // "net", "tuner", "profiler", "doctor", "preflight", "all"
  std::string_view description;
};

std::span<const Spec> registry();
const Spec* find(std::string_view name);

// Parses a whole integer in [min, max]: decimal, or hex after 0x/0X, with an optional sign; a leading 0
// is decimal ("010" is 10, never octal). nullopt and a message on failure.
std::optional<int64_t> parse_int(std::string_view text, int64_t min, int64_t max, std::string* error);
// Accepts 1/0, true/false, yes/no, on/off (case-insensitive).
std::optional<bool> parse_bool(std::string_view text, std::string* error);

// Raw value of a variable: nullopt when unset or empty.
std::optional<std::string> raw(std::string_view name);

// Typed reads of registered variables. Unregistered names are a programming error (reported, and
// the fallback returned). Invalid values are reported once per variable and the default returned.
int64_t get_int(std::string_view name);
bool get_bool(std::string_view name);
std::string get_string(std::string_view name);  // default_value when unset

// For tests: forget which variables were already reported.
void reset_reported_for_tests();

}  // namespace railscope::params
