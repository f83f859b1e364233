// SPDX-License-Identifier: Apache-2.0
// Well-formed UTF-8 for text that goes into JSON (RFC 8259 §8.1 wants UTF-8; nlohmann's dump() throws on
// anything else): strings that came from outside (an environment variable, a comm name, sysfs, a host
// name given on the command line) in another encoding, or cut short by a length cap.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace railscope::utf8 {

// Length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629, table 3-7 of the Unicode
// standard: no overlong forms, no surrogates, nothing above U+10FFFF), or 0 when none starts there.
size_t sequence_length(std::string_view s, size_t i);
// Appends the well-formed sequence that starts at s[i], or U+FFFD when none does, and moves i past what
// it consumed.
void append_or_replacement(std::string& out, std::string_view s, size_t& i);
// s as well-formed UTF-8 of at most max_bytes: each byte that starts no well-formed sequence becomes
// U+FFFD, and a sequence that would not fit whole is left out (a cap never cuts a character).
std::string well_formed(std::string_view s, size_t max_bytes);

}  // namespace railscope::utf8
