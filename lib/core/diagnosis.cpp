// SPDX-License-Identifier: Apache-2.0
#include "railscope/core/diagnosis.h"

#include <algorithm>

namespace railscope::diag {

namespace detail {
std::span<const Entry> catalogue_entries();  // diagnosis_catalogue.cpp
}

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::Ok: return "ok";
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "error";
}

std::span<const Entry> catalogue() { return detail::catalogue_entries(); }

const Entry* find(std::string_view id) {
  auto entries = catalogue();
  auto it = std::lower_bound(entries.begin(), entries.end(), id,
                             [](const Entry& e, std::string_view key) { return e.id < key; });
  if (it == entries.end() || it->id != id) return nullptr;
  return &*it;
}

Finding make(std::string_view id, Severity severity, std::string detail, std::string fix) {
  const Entry* e = find(id);
  if (e == nullptr) {
    e = find("internal.unknown_diagnosis");
    detail = std::string(id) + ": " + detail;
  }
  return Finding{e, severity, std::move(detail), std::move(fix)};
}

Finding make(std::string_view id, std::string detail, std::string fix) {
  const Entry* e = find(id);
  return make(id, e != nullptr ? e->severity : Severity::Error, std::move(detail), std::move(fix));
}

std::string one_line(const Finding& f) {
  std::string line = "[";
  line += f.id();
  line += "] ";
  line += f.detail.empty() ? std::string(f.entry->title) : f.detail;
  if (!line.empty() && line.back() != '.') line += '.';
  const std::string_view fix = f.effective_fix();
  if (!fix.empty()) {
    line += " Fix: ";
    line += fix;
  }
  return line;
}

}  // namespace railscope::diag
