#pragma once
#include "util/Result.hpp"

#include <string>
#include <sys/types.h>
#include <vector>

namespace ddl {

Result<std::string> read_file(const std::string& path);
// Reads at most `limit` bytes; an Error names the limit when the file is larger.
Result<std::string> read_file_limited(const std::string& path, std::size_t limit);

// Reads a file a user named (a hostfile, a file setup names) without ever waiting on it: opened
// non-blocking, it must be a regular file (not a FIFO, a device or a folder) of at most `limit` bytes; an
// Error names the path and what it is. A file that would block (/proc/kmsg) is an Error too.
Result<std::string> read_regular_file(const std::string& path, std::size_t limit);

// Writes to a temp file in the same folder, fsyncs, then renames over `path`: readers see the old or
// the new content, never a mix, also after a crash.
Status write_file_atomic(const std::string& path, const std::string& content, mode_t mode = 0600);

// mkdir -p with the given mode for the folders it creates.
Status make_dirs(const std::string& path, mode_t mode = 0700);
Status remove_tree(const std::string& path);
bool path_exists(const std::string& path);
// The regular files and symbolic links under `dir` (links not followed), as paths relative to it, in name
// order; __pycache__ folders (byte-code caches, not content) are skipped.
Result<std::vector<std::string>> list_tree_files(const std::string& dir);

// A temporary folder removed with everything in it when the object dies.
class TempDir {
public:
    explicit TempDir(const std::string& prefix = "ddl");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
};

} // namespace ddl
