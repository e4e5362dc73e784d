#include "cli/Completion.hpp"

#include "cli/CommandTable.hpp"
#include "core/Diagnostics.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace ddl::cli {
namespace {

// "-y --yes --only ..." for one (sub)command; positionals have no dashed names and are left out.
std::string option_words(const CLI::App& app) {
    std::string words;
    for (const auto* opt : app.get_options()) {
        for (const auto& s : opt->get_snames())
            words += " -" + s;
        for (const auto& l : opt->get_lnames())
            words += " --" + l;
    }
    return words;
}

} // namespace

std::string completion_script(const CLI::App& app, const std::string& shell) {
    std::string commands, cases;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        commands += " " + sub->get_name();
        cases += "    " + sub->get_name() + ") opts=\"" + option_words(*sub) + "\" ;;\n";
    }
    std::string bash =
        "# ddl's completion for bash, written by `ddl completion bash` from its command table.\n"
        "_ddl() {\n"
        "  local cur=${COMP_WORDS[COMP_CWORD]} sub='' opts='' i\n"
        "  local commands=\"" +
        commands +
        "\"\n"
        "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
        "    case \" $commands \" in *\" ${COMP_WORDS[i]} \"*) sub=${COMP_WORDS[i]}; break ;; esac\n"
        "  done\n"
        "  if [[ -z $sub ]]; then\n"
        "    COMPREPLY=($(compgen -W \"$commands" +
        option_words(app) +
        "\" -- \"$cur\"))\n"
        "    return\n"
        "  fi\n"
        "  case $sub in\n" +
        cases +
        "  esac\n"
        "  if [[ $cur == -* ]]; then\n"
        "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
        "  else\n"
        "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
        "  fi\n"
        "}\n"
        "complete -o filenames -F _ddl ddl\n";
    if (shell == "zsh") return "#compdef ddl\nautoload -U +X bashcompinit && bashcompinit\n" + bash;
    return bash;
}

CommandBody completion_command() {
    auto shell = std::make_shared<std::string>();
    return {.add_options =
                [shell](CLI::App& sub) {
                    sub.add_option("shell", *shell, "bash or zsh")
                        ->required()
                        ->check(CLI::IsMember({"bash", "zsh"}));
                },
            .action =
                [shell](Invocation& inv) {
                    std::cout << completion_script(inv.app, *shell);
                    return exit_code::k_ok;
                }};
}

} // namespace ddl::cli
