// `ddl init`: a commented starter cluster.yaml for a target.
#include "cli/CommandTable.hpp"
#include "cli/OptionChecks.hpp"
#include "cli/StarterSpecs.hpp"
#include "core/Diagnostics.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace ddl::cli {
namespace {

struct InitArgs {
    std::string target = "local";
    std::string out = "cluster.yaml";
    std::string name = "my-cluster";
    bool force = false;
};

void add_options(CLI::App& sub, InitArgs& a) {
    sub.add_option("--target", a.target, "Target infrastructure")
        ->check(CLI::IsMember(target_names()))
        ->capture_default_str();
    sub.add_option("-o,--output-file", a.out, "Where to write it ('-' for stdout)")
        ->check(k_non_empty)
        ->capture_default_str();
    sub.add_option("--name", a.name, "Cluster name")->capture_default_str();
    sub.add_flag("--force", a.force, "Overwrite an existing file");
}

int init(const Invocation& inv, const InitArgs& a) {
    if (!is_dns_label(a.name))
        return inv.fail("--name must be DNS-safe (got \"" + a.name +
                            "\")\nhint: lowercase letters, digits, '-'",
                        exit_code::k_bad_input);
    auto text = starter_spec(a.target, a.name);
    if (!text) return inv.fail(text.error().message, exit_code::k_bad_input);
    if (a.out == "-") {
        std::cout << *text;
        return exit_code::k_ok;
    }
    if (path_exists(a.out) && !a.force)
        return inv.fail(a.out + " exists already\nhint: pass --force to overwrite it, or -o OTHER.yaml",
                        exit_code::k_bad_input);
    if (auto s = write_file_atomic(a.out, *text, 0644); !s)
        return inv.fail(s.error().message, exit_code::k_failure);
    std::cout << "wrote " << a.out << " (target " << a.target << "); next: ddl validate " << a.out << "\n";
    return exit_code::k_ok;
}

} // namespace

CommandBody init_command() {
    auto a = std::make_shared<InitArgs>();
    return {.add_options = [a](CLI::App& sub) { add_options(sub, *a); },
            .action = [a](Invocation& inv) { return init(inv, *a); }};
}

} // namespace ddl::cli
