#pragma once
// A change detector over strings, files and folder trees (64-bit FNV-1a, hex): equal inputs give equal
// digests on every run and machine. For "did anything change since last time", not for security.
#include "util/Result.hpp"

#include <cstdint>
#include <string>

namespace ddl {

class Digest {
public:
    // Each piece is framed by its length, so ("ab","c") and ("a","bc") differ.
    Digest& add(const std::string& piece);
    // The file's content; a missing file adds a marker of its own.
    Digest& add_file(const std::string& path);
    // Every regular file and symlink under `dir` by relative path, in name order: path, then content
    // (a link's target). A missing folder adds a marker of its own. Python's byte-code caches
    // (__pycache__ folders) are left out: they appear when the code runs.
    Status add_tree(const std::string& dir);
    std::string hex() const;

private:
    void mix(const char* data, std::size_t n);
    std::uint64_t m_h = 14695981039346656037ULL;
};

} // namespace ddl
