// SPDX-License-Identifier: Apache-2.0
// Output files that may sit in a folder other users share (/tmp, a team's profile folder, node_exporter's
// textfile folder). Nothing here writes through a symbolic link at the name it writes, so a link planted
// there by another user cannot make railscope truncate or append to a file of the user running the job:
// whole files are written to a unique temporary name (O_EXCL) and renamed over the name (rename replaces a
// link, never follows it); appends open with O_NOFOLLOW and only to a regular file of this user.
// Files are created 0644 less the umask.
//
// A folder that every user may write without the sticky bit is refused: anyone could replace or remove
// what is written there. A folder writable by a group is accepted (a team sharing a folder trusts its
// members), and so is a folder another user owns (node_exporter's textfile folder often belongs to root or
// to a service user).
#pragma once

#include <string>
#include <string_view>

namespace railscope::core {

// Why output should not go to the folder of path, or "" when it may (or when there is no such folder: the
// write then fails with its own reason).
std::string unsafe_output_folder(const std::string& path);

// Writes content to path so a reader sees the old file or the new one, never part of either. false with
// *error set (the path and the reason) when it could not; path is then as it was.
bool write_file_atomically(const std::string& path, std::string_view content, std::string* error);
// The same with exactly `mode` (the umask not applied): for a file another user's reader must open.
bool write_file_atomically(const std::string& path, std::string_view content, std::string* error,
                           unsigned mode);

// Whether write_file_atomically could write path: a unique temporary file is made beside it and removed.
bool can_write_atomically(const std::string& path, std::string* error);

// A descriptor open for appending to path (created when missing), O_CLOEXEC; -1 with *error set when path
// is a symbolic link, not a regular file, owned by another user, or cannot be opened.
int open_for_append(const std::string& path, std::string* error);

}  // namespace railscope::core
