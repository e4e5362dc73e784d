// Every registered target comes with its tests and docs: a golden render case, a diagnostics case, an e2e
// suite, a section in docs/spec.md and a section with rows in docs/targets.md. A target added without one
// of them fails here, naming what is missing (docs/adding-a-target.md, "Checks that catch a half-added
// target").
#include "targets/Registry.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

using namespace ddl;
namespace fs = std::filesystem;

namespace {

// Whether some folder under `dir` holds `file` with text that matches `re`.
bool some_case(const fs::path& dir, const std::string& file, const std::regex& re) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        auto text = read_file((e.path() / file).string());
        if (text && std::regex_search(*text, re)) return true;
    }
    return false;
}

// The e2e suites: tests/e2e/test_*.sh named after the target or writing a spec for it.
bool some_suite(const fs::path& dir, const std::string& target) {
    const std::regex spec("target: " + target + "\\b");
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (!name.starts_with("test_") || !name.ends_with(".sh")) continue;
        if (name.find(target) != std::string::npos) return true;
        auto text = read_file(e.path().string());
        if (text && std::regex_search(*text, spec)) return true;
    }
    return false;
}

// A "## <target>" section (docs/targets.md) with at least one table row before the next section.
bool section_with_rows(const std::string& doc, const std::string& heading_re) {
    std::smatch m;
    if (!std::regex_search(doc, m, std::regex("(^|\n)" + heading_re + "[^\n]*\n"))) return false;
    const std::string rest = doc.substr(static_cast<std::size_t>(m.position(0) + m.length(0)));
    const std::string body = rest.substr(0, rest.find("\n## "));
    return std::regex_search(body, std::regex("(^|\n)\\| [^\n]*\\|"));
}

// What `target` lacks under the source tree `root`; empty: nothing.
std::vector<std::string> missing_parts(const fs::path& root, const std::string& target) {
    std::vector<std::string> out;
    const std::regex spec_line("(^|\n)target: " + target + "[ \t]*(\n|#|$)");
    if (!some_case(root / "tests" / "golden", "cluster.yaml", spec_line))
        out.push_back("a golden case (tests/golden/<case>/cluster.yaml with target: " + target + ")");
    if (!some_case(root / "tests" / "diag", "cluster.yaml", spec_line))
        out.push_back("a diagnostics case (tests/diag/<case>/cluster.yaml with target: " + target + ")");
    if (!some_suite(root / "tests" / "e2e", target))
        out.push_back("an e2e suite (tests/e2e/test_*.sh named after it or deploying it)");
    const std::string spec_md = read_file((root / "docs" / "spec.md").string()).value_or("");
    if (!std::regex_search(spec_md, std::regex("(^|\n)## `" + target + "`")))
        out.push_back("a section \"## `" + target + "`\" in docs/spec.md");
    const std::string targets_md = read_file((root / "docs" / "targets.md").string()).value_or("");
    if (!section_with_rows(targets_md, "## " + target + "\\b"))
        out.push_back("a section \"## " + target + " (...)\" with table rows in docs/targets.md");
    return out;
}

void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    REQUIRE(write_file_atomic(file.string(), text, 0644).ok());
}

} // namespace

TEST_CASE("every registered target has a golden case, a diagnostics case, an e2e suite and its docs") {
    const fs::path root = DDL_SOURCE_DIR;
    REQUIRE_FALSE(target_registry().empty());
    for (const auto& entry : target_registry()) {
        const std::string name = entry.kind.name();
        INFO("target " << name);
        CHECK(missing_parts(root, name) == std::vector<std::string>{});
    }
}

TEST_CASE("the registry walk names each part a target lacks") {
    TempDir tmp("ddl-registry-walk");
    const fs::path root = tmp.path();
    write(root / "tests/golden/x-one/cluster.yaml", "apiVersion: ddl/v1\ntarget: x\n");
    write(root / "tests/diag/x-bad/cluster.yaml", "target: x   # a comment\n");
    write(root / "tests/e2e/test_other.sh", "spec() { echo 'target: x'; }\n");
    write(root / "docs/spec.md", "# Spec\n## `x` (a target)\ntext\n");
    write(root / "docs/targets.md", "# Calls\n## x (a target)\n| call | follows |\n|---|---|\n## y\n");
    CHECK(missing_parts(root, "x").empty());

    // Each part taken away in turn is named, and only that one.
    fs::remove_all(root / "tests/golden/x-one");
    write(root / "tests/golden/xy-one/cluster.yaml", "target: xy\n"); // another target's case
    auto missing = missing_parts(root, "x");
    REQUIRE(missing.size() == 1);
    CHECK(missing[0].starts_with("a golden case"));

    write(root / "tests/golden/x-one/cluster.yaml", "target: x\n");
    fs::remove_all(root / "tests/diag/x-bad");
    missing = missing_parts(root, "x");
    REQUIRE(missing.size() == 1);
    CHECK(missing[0].starts_with("a diagnostics case"));

    write(root / "tests/diag/x-bad/cluster.yaml", "target: x\n");
    fs::remove(root / "tests/e2e/test_other.sh");
    write(root / "tests/e2e/lib.sh", "echo 'target: x'\n"); // not a suite
    missing = missing_parts(root, "x");
    REQUIRE(missing.size() == 1);
    CHECK(missing[0].starts_with("an e2e suite"));

    write(root / "tests/e2e/test_x_lifecycle.sh", "true\n");
    write(root / "docs/spec.md", "# Spec\n## `xy`\n");
    missing = missing_parts(root, "x");
    REQUIRE(missing.size() == 1);
    CHECK(missing[0].find("docs/spec.md") != std::string::npos);

    write(root / "docs/spec.md", "## `x`\n");
    write(root / "docs/targets.md", "## x (a target)\nno table here\n## y\n| a | b |\n");
    missing = missing_parts(root, "x");
    REQUIRE(missing.size() == 1);
    CHECK(missing[0].find("docs/targets.md") != std::string::npos);
}
