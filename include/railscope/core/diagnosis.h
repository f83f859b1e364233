// SPDX-License-Identifier: Apache-2.0
// The diagnosis catalogue: every failure railscope can name, with a stable id, its likely cause and
// the fix. One catalogue serves the net plugin's error paths, the profiler's fault records and
// `railscope doctor`. A Finding is one occurrence: a catalogue entry plus the facts of this case.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace railscope::diag {

enum class Severity { Ok, Info, Warning, Error };
std::string_view to_string(Severity s);

struct Entry {
  std::string_view id;     // stable, dotted, e.g. "mtu.mismatch"; never renamed once released
  Severity severity;       // default severity of a finding of this kind
  std::string_view title;  // a few words
  std::string_view cause;  // what usually causes it
  std::string_view fix;    // what to do, one line
};

// All entries, sorted by id.
std::span<const Entry> catalogue();
// nullptr when the id is unknown.
const Entry* find(std::string_view id);

struct Finding {
  const Entry* entry = nullptr;  // never null in a valid finding
  Severity severity = Severity::Error;
  std::string detail;  // the facts of this case: devices, GIDs, sizes, limits
  std::string fix;     // a case-specific fix; empty = the entry's generic fix

  std::string_view id() const { return entry->id; }
  std::string_view effective_fix() const { return fix.empty() ? entry->fix : std::string_view(fix); }
};

// Builds a finding for a catalogue id; an unknown id becomes "internal.unknown_diagnosis" so a typo
// can never crash an error path (a unit test checks every id used in the code exists).
Finding make(std::string_view id, std::string detail, std::string fix = {});
Finding make(std::string_view id, Severity severity, std::string detail, std::string fix = {});

// "[mtu.mismatch] <detail>. Fix: <fix>" — the one line a user sees.
std::string one_line(const Finding& f);

}  // namespace railscope::diag
