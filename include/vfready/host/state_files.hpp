// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

// Files that others read whole while vfreadyd rewrites them (its status file, NFD labels,
// node_exporter metrics): written to a dotfile beside the target, then renamed over it,
// so a reader sees the old content or the new, never a part.
namespace vfready::host {

// What write_file_atomically answers for a directory that every user may write (its
// "others" write bit) and that has no sticky bit: anyone could replace the file there. Not an
// errno (those are positive).
inline constexpr int kDirectoryWritableByOthers = -2;

// 0, kDirectoryWritableByOthers, or the errno of the step that failed (the target is
// then as it was). The file gets `mode`; `make_dir`: its directory is made (0755) when
// missing, else its absence is ENOENT. The temporary file has a name nobody can guess and
// is created, never opened (O_EXCL, O_NOFOLLOW): nothing planted in the directory (a
// symlink, a FIFO) is followed or waited on.
int write_file_atomically(const std::string& path, std::string_view content, unsigned mode,
                          bool make_dir);

}  // namespace vfready::host
