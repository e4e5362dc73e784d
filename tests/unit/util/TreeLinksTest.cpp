#include "util/TreeLinks.hpp"

#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

using namespace ddl;
namespace fs = std::filesystem;

namespace {
std::vector<std::string> paths_of(const std::vector<EscapingLink>& links) {
    std::vector<std::string> out;
    for (const auto& l : links)
        out.push_back(l.path);
    return out;
}
} // namespace

TEST_CASE("links that stay inside a tree are kept, and absolute ones count as leading out even into it") {
    TempDir t;
    const fs::path top = t.path() + "/top";
    fs::create_directories(top / "a/b");
    std::ofstream(top / "a/file") << "x";
    fs::create_symlink("../file", top / "a/b/up");
    fs::create_symlink("b", top / "a/sub");
    fs::create_symlink("missing-but-inside", top / "a/dangling");
    fs::create_symlink(top / "a/file", top / "abs-inside");
    auto links = escaping_links(top.string());
    REQUIRE(links);
    CHECK(paths_of(*links) == std::vector<std::string>{"abs-inside"});
    CHECK(links->front().target == (top / "a/file").string());
}

TEST_CASE(
    "a link leads out of a tree through .. past its top, and through a chain of links that looks inside") {
    TempDir t;
    const fs::path top = t.path() + "/top";
    fs::create_directories(top / "d");
    std::ofstream(t.path() + "/secret") << "x";
    fs::create_symlink("../../secret", top / "d/up");
    fs::create_symlink(".", top / "d/self");
    fs::create_symlink("self/self/../../secret", top / "d/chain");
    fs::create_symlink("/etc/shadow", top / "shadow");
    fs::create_symlink("loop", top / "loop");
    auto links = escaping_links(top.string());
    REQUIRE(links);
    CHECK(paths_of(*links) == std::vector<std::string>{"d/chain", "d/up", "loop", "shadow"});
}

TEST_CASE("a folder that cannot be read is an error that names it") {
    auto links = escaping_links("/nonexistent/ddl-tree");
    REQUIRE_FALSE(links);
    CHECK(links.error().message.find("/nonexistent/ddl-tree") != std::string::npos);
}
