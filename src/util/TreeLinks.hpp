#pragma once
// Symbolic links that would lead a reader out of a folder tree: a dataset's folder, an unpacked archive.
// ddl copies such a tree to the nodes and packs it into shards; a link out of it would carry (or let a
// node's job read) files that were never part of it, such as this machine's keys.
#include "util/Result.hpp"

#include <string>
#include <vector>

namespace ddl {

struct EscapingLink {
    std::string path;   // relative to the tree's root
    std::string target; // the link's text
};

// The links under `root` (folder links are not descended) whose text is absolute, or whose target,
// resolved as the file system would (through the links it passes, `..` included), lies outside `root`.
// An absolute link counts even when it points into `root`: a copy on a node would read the node's path.
// In name order; an Error when `root` cannot be read.
Result<std::vector<EscapingLink>> escaping_links(const std::string& root);

} // namespace ddl
