#include "cli/App.hpp"

#include "cli/CommandTable.hpp"
#include "cli/Invoke.hpp"
#include "cli/OptionChecks.hpp"
#include "core/Diagnostics.hpp"
#include "core/Log.hpp"
#include "runtime/Launcher.hpp"
#include "state/KnownFolders.hpp"
#include "util/Redactor.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>

namespace ddl::cli {
namespace {

// An entry of the command table as a CLI11 subcommand.
struct Registered {
    const CommandEntry* entry = nullptr;
    CLI::App* sub = nullptr;
    CommandBody body;
};

// Every entry of the table, in its order, under the root or under its group ("bench allreduce" under
// "bench"); `chosen` becomes the index of the entry whose subcommand was parsed.
std::vector<Registered> register_commands(CLI::App& app, std::optional<std::size_t>& chosen) {
    std::vector<Registered> out;
    for (const auto& entry : command_table()) {
        std::string name = entry.name;
        CLI::App* parent = &app;
        if (auto space = name.rfind(' '); space != std::string::npos) {
            for (const auto& r : out)
                if (r.entry->name == name.substr(0, space)) parent = r.sub;
            name = name.substr(space + 1);
        }
        Registered r{&entry, parent->add_subcommand(name, entry.help), {}};
        if (!entry.body) {
            r.sub->require_subcommand(1);
        } else {
            r.body = entry.body();
            r.body.add_options(*r.sub);
            r.sub->callback([&chosen, i = out.size()] { chosen = i; });
        }
        out.push_back(std::move(r));
    }
    return out;
}

// Everything after the first "--" is the remote command, taken verbatim (CLI11 would otherwise let an
// option just before "--" interpret the command's own flags). Returns the words before it, reversed as
// CLI11's parse takes them, with mpirun's "-np" spelled "--np".
std::vector<std::string> split_at_dashdash(int argc, char** argv, std::vector<std::string>& after) {
    std::vector<std::string> before;
    bool dashdash = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (!dashdash && a == "--") {
            dashdash = true;
        } else if (dashdash) {
            after.push_back(a);
        } else {
            before.push_back(a == "-np" ? "--np" : a);
        }
    }
    return {before.rbegin(), before.rend()};
}

// Edit distance (insertions, deletions, substitutions, and swaps of neighbours) between two words.
std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min(
                {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.size()][b.size()];
}

// The first word that is not a global option (or its value): the command the user meant, if it is none
// of ddl's. Returns the message naming the nearest commands, as git does ("did you mean").
std::optional<std::string> unknown_command(const CLI::App& app, const std::vector<std::string>& reversed) {
    std::string word;
    for (auto it = reversed.rbegin(); it != reversed.rend(); ++it) {
        if (*it == "--state-dir" || *it == "--output") {
            if (++it == reversed.rend()) return std::nullopt;
            continue;
        }
        if (it->empty() || (*it)[0] == '-') continue;
        word = *it;
        break;
    }
    if (word.empty()) return std::nullopt;
    std::vector<std::string> near;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        if (sub->get_name() == word) return std::nullopt;
        const std::size_t limit = std::max<std::size_t>(1, sub->get_name().size() / 3);
        const bool prefix = sub->get_name().rfind(word, 0) == 0;
        if (edit_distance(word, sub->get_name()) <= limit || prefix) near.push_back(sub->get_name());
    }
    std::string message = "ddl: \"" + printable_utf8(word, 40) + "\" is not a ddl command";
    if (!near.empty()) message += "\nhint: did you mean " + join(near, " or ") + "?";
    return message + "\n`ddl --help` lists the commands";
}

} // namespace

int run_app(int argc, char** argv) {
    // Everything ddl prints (messages, JSON, help, diagnostics) passes the redactor the log uses: a secret
    // registered anywhere (a token, a value the spec's env: reads from here) never reaches the terminal.
    redaction::StreamRedaction redact_out(std::cout);
    redaction::StreamRedaction redact_err(std::cerr);
    CLI::App app{"ddl — one cluster spec to a working GPU cluster for distributed deep learning", "ddl"};
    app.set_version_flag("--version", std::string("ddl ") + DDL_VERSION);
    app.require_subcommand(1);
    app.fallthrough();
    GlobalOptions g;
    int verbose = 0;
    bool quiet = false;
    std::string output = "text";
    // ./.ddl where it exists, else ~/.ddl (state/KnownFolders.hpp); $DDL_STATE_DIR sets another default, as
    // KUBECONFIG does kubectl's.
    g.state_dir = default_state_folder();
    if (const char* env = std::getenv("DDL_STATE_DIR"); env && *env) g.state_dir = env;
    app.add_option("--state-dir", g.state_dir,
                   "Folder holding every cluster's state ($DDL_STATE_DIR, else ./.ddl where it exists, "
                   "else ~/.ddl)")
        ->check(k_non_empty)
        ->capture_default_str();
    app.add_flag("-v,--verbose", verbose, "Show the commands ddl runs");
    app.add_flag("-q,--quiet", quiet, "Only warnings and errors");
    app.add_option("--output", output, "Output format where a command prints data")
        ->check(CLI::IsMember({"text", "json"}));
    // Subcommands copy the footer (and the settings above) when they are added.
    app.footer("Exit codes: 0 done; 1 failed (the message says what to do next); 2 bad input (nothing was "
               "changed); 3 partly done (e.g. gc: some clusters left); 130 interrupted (deploy resumes).\n"
               "`ddl help COMMAND` or `ddl COMMAND --help` shows one command's options.");
    std::optional<std::size_t> chosen;
    auto commands = register_commands(app, chosen);

    std::vector<std::string> after;
    auto args = split_at_dashdash(argc, argv, after);
    if (auto unknown = unknown_command(app, args)) {
        std::cerr << *unknown << "\n";
        return exit_code::k_bad_input;
    }
    try {
        app.parse(args);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return exit_code::k_bad_input;
    } catch (const std::exception& e) {
        std::cerr << "ddl: fatal: " << e.what() << "\n";
        return exit_code::k_failure;
    }
    log::init(quiet ? log::Level::quiet : verbose > 0 ? log::Level::verbose : log::Level::normal);
    g.json = output == "json";
    if (!chosen) return exit_code::k_bad_input;
    auto& command = commands[*chosen];
    Invocation inv{command.entry->name, g, app, std::move(after), nullptr};
    try {
        const int rc = invoke(*command.entry, command.body, inv);
        // Ctrl-C during ranks ddl launched: 130, whatever the command made of the stopped ranks.
        if (const int sig = runtime::interrupting_signal(); sig != 0 && rc != exit_code::k_ok)
            return 128 + sig;
        return rc;
    } catch (const std::exception& e) {
        log::error(std::string("ddl: fatal: ") + e.what());
        return exit_code::k_failure;
    }
}

} // namespace ddl::cli
