// SPDX-License-Identifier: Apache-2.0
// Reading fields of JSON that another process wrote (a rank's message, netbench's output) without
// nlohmann's throwing accessors: json::value(key, default) throws type_error when the key is there with
// another type, and nothing in `railscope preflight` catches it, so one such field from a peer would end
// rank 0's run instead of being refused.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <string_view>

namespace railscope::preflight {

// Whether j is an object whose "schema" is the string `schema`.
inline bool has_schema(const nlohmann::json& j, std::string_view schema) {
  if (!j.is_object()) return false;
  const auto s = j.find("schema");
  return s != j.end() && s->is_string() && s->get_ref<const std::string&>() == schema;
}

// j[key] when j is an object and it is a finite number, else 0.
inline double finite_number(const nlohmann::json& j, std::string_view key) {
  if (!j.is_object()) return 0;
  const auto v = j.find(key);
  if (v == j.end() || !v->is_number()) return 0;
  const double d = v->get<double>();
  return std::isfinite(d) ? d : 0;
}

}  // namespace railscope::preflight
