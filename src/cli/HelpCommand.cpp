// `ddl help [COMMAND]`: the commands, or one command's options.
#include "cli/CommandTable.hpp"
#include "core/Diagnostics.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace ddl::cli {
namespace {

int help(const Invocation& inv, const std::string& topic) {
    const CLI::App& app = inv.app;
    if (topic.empty()) {
        // app.help() would describe the last parsed subcommand (this one).
        std::cout << app.get_formatter()->make_help(&app, "ddl", CLI::AppFormatMode::Normal);
        return exit_code::k_ok;
    }
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        if (sub->get_name() == topic && topic != "help") {
            std::cout << sub->help();
            return exit_code::k_ok;
        }
    }
    std::cerr << "ddl help: no command \"" << topic << "\"; `ddl help` lists them\n";
    return exit_code::k_bad_input;
}

} // namespace

CommandBody help_command() {
    auto topic = std::make_shared<std::string>();
    return {.add_options =
                [topic](CLI::App& sub) { sub.add_option("command", *topic, "A command, e.g. deploy"); },
            .action = [topic](Invocation& inv) { return help(inv, *topic); }};
}

} // namespace ddl::cli
