#pragma once
// A dataset's manifest: every regular file by relative path with its size and SHA-256. The same program
// makes it on this machine (the source) and on the nodes (each copy); a cache beside the data keeps each
// file's hash with its size, mtime, ctime and inode, so a file is hashed again only when something wrote
// to it (or when every file is asked for, `ddl data stage --verify`).
#include "util/Result.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ddl::cli {

struct ManifestEntry {
    std::string path; // relative to the dataset's folder
    std::uint64_t size = 0;
    std::string sha256; // 64 lowercase hex digits
    bool operator==(const ManifestEntry&) const = default;
};

struct Manifest {
    std::vector<ManifestEntry> files; // sorted by path
    int hashed = 0;                   // files the program hashed this time (the rest came from its cache)
    std::uint64_t bytes() const;
    // A short digest of the whole list (paths, sizes, hashes): equal manifests, equal digests.
    std::string digest() const;
};

// The program that prints the manifest of folder `dir` (python3), keeping its cache in the file `cache`
// (written atomically); `rehash_all` hashes every file whatever the cache says. It fails when `dir` is not
// a folder or a file name holds a line break.
std::vector<std::string> manifest_argv(const std::string& dir, const std::string& cache, bool rehash_all);

// Reads the program's output: "SHA256 SIZE PATH" lines and a last "# hashed N". An Error names the first
// line that is neither.
Result<Manifest> parse_manifest(const std::string& text);

// What a copy lacks against the source: files missing from it, files whose size or hash differ, files
// only the copy has.
struct ManifestDiff {
    std::vector<std::string> missing, changed, extra;
    bool empty() const { return missing.empty() && changed.empty() && extra.empty(); }
    // missing and changed: what has to be sent again.
    std::vector<std::string> to_send() const;
};
ManifestDiff diff_manifests(const Manifest& source, const Manifest& copy);

} // namespace ddl::cli
