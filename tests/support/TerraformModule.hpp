#pragma once
// What the tests of a Terraform target read from its module folder (src/targets/<name>/terraform/): the
// variables variables.tf declares, and whether `ddl render` writes the module's .tf files byte for byte.
#include "render/Renderer.hpp"
#include "targets/Kinds.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>

namespace ddl::test {

struct HclVariable {
    bool has_default = false;
};

// The variable blocks of the module's .tf files (its variables.tf and the common.tf it links): name ->
// whether it has a default. Reads the HCL structurally (top-level `variable "x" {` blocks, `default =` at the
// block's own depth), enough for ddl's modules.
inline std::map<std::string, HclVariable> module_variables(const std::filesystem::path& module) {
    std::string all;
    for (const auto& entry : std::filesystem::directory_iterator(module)) {
        if (entry.path().extension() != ".tf") continue;
        auto text = read_file(entry.path().string());
        REQUIRE(text.ok());
        all += *text + "\n";
    }
    std::map<std::string, HclVariable> out;
    const std::regex head(R"re(^variable\s+"([^"]+)"\s*\{)re");
    const std::regex default_line(R"(^\s*default\s*=)");
    std::istringstream in(all);
    std::string line, current;
    int depth = 0;
    while (std::getline(in, line)) {
        std::smatch m;
        const std::string code = line.substr(0, line.find('#'));
        if (depth == 0 && std::regex_search(code, m, head)) current = m[1];
        if (depth == 1 && !current.empty() && std::regex_search(code, default_line))
            out[current].has_default = true;
        for (char c : code) {
            if (c == '{') ++depth;
            if (c == '}') --depth;
        }
        if (!current.empty()) out.emplace(current, HclVariable{});
        if (depth == 0) current.clear();
    }
    return out;
}

// A spec file that must load (its diagnostics shown when it does not).
inline Spec load_spec(const std::filesystem::path& file) {
    auto r = load_spec_file(file.string());
    INFO(r.diagnostics.format_text());
    REQUIRE(r.spec.has_value());
    return *r.spec;
}

// Every .tf file of `module` is in `files` at `<module_dir>/<name>` with the same bytes; returns how many.
inline std::size_t check_module_rendered(const std::filesystem::path& module, const RenderedFiles& files,
                                         const std::string& module_dir) {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(module)) {
        if (e.path().extension() != ".tf") continue;
        ++n;
        auto text = read_file(e.path().string());
        REQUIRE(text.ok());
        const std::string rel = module_dir + "/" + e.path().filename().string();
        INFO(rel);
        REQUIRE(files.count(rel) == 1);
        CHECK(files.at(rel) == *text);
    }
    return n;
}

} // namespace ddl::test
