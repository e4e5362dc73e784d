// `ddl help [COMMAND [SUBCOMMAND]]`: the commands, or one command's options.
#include "cli/CommandTable.hpp"
#include "core/Diagnostics.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

namespace ddl::cli {
namespace {

// The command a path of names leads to (`bench allreduce`), or null.
const CLI::App* find_command(const CLI::App& app, const std::vector<std::string>& words) {
    const CLI::App* at = &app;
    for (const auto& w : words) {
        const CLI::App* next = nullptr;
        for (const auto* sub : at->get_subcommands([](const CLI::App*) { return true; }))
            if (sub->get_name() == w) next = sub;
        if (!next) return nullptr;
        at = next;
    }
    return at;
}

int help(const Invocation& inv, const std::vector<std::string>& topic) {
    const CLI::App& app = inv.app;
    if (topic.empty()) {
        // app.help() would describe the last parsed subcommand (this one).
        std::cout << app.get_formatter()->make_help(&app, "ddl", CLI::AppFormatMode::Normal);
        return exit_code::k_ok;
    }
    const CLI::App* found = topic.front() == "help" ? nullptr : find_command(app, topic);
    if (found) {
        std::cout << found->help();
        return exit_code::k_ok;
    }
    std::string words;
    for (const auto& w : topic)
        words += (words.empty() ? "" : " ") + w;
    std::cerr << "ddl help: no command \"" << words << "\"; `ddl help` lists them\n";
    return exit_code::k_bad_input;
}

} // namespace

CommandBody help_command() {
    auto topic = std::make_shared<std::vector<std::string>>();
    return {.add_options =
                [topic](CLI::App& sub) {
                    sub.add_option("command", *topic, "A command, e.g. deploy or bench allreduce");
                },
            .action = [topic](Invocation& inv) { return help(inv, *topic); }};
}

} // namespace ddl::cli
