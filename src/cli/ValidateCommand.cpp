// `ddl validate`: every problem of a spec at once, positioned; exit 2 if any.
#include "cli/CommandTable.hpp"
#include "cli/PrintDiagnostics.hpp"
#include "core/Diagnostics.hpp"
#include "targets/Registry.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace ddl::cli {
namespace {

int validate(const Invocation& inv, const std::string& file) {
    auto r = load_spec_file(file);
    print_diagnostics(inv.g.json, r.diagnostics);
    if (!r.spec) return exit_code::k_bad_input;
    if (!inv.g.json)
        std::cout << file << ": valid (cluster " << r.spec->name << ", target " << r.spec->target << ", "
                  << r.spec->node_count() << " node(s))\n";
    return exit_code::k_ok;
}

} // namespace

CommandBody validate_command() {
    auto file = std::make_shared<std::string>();
    return {
        .add_options = [file](CLI::App& sub) { sub.add_option("file", *file, "cluster.yaml")->required(); },
        .action = [file](Invocation& inv) { return validate(inv, *file); }};
}

} // namespace ddl::cli
