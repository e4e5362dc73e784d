// `ddl completion bash|zsh`: the completion script, written from the command table.
#include "cli/CommandTable.hpp"
#include "cli/Completion.hpp"
#include "core/Diagnostics.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
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

// The choices of an option checked against a set, as CLI11 writes them into its type name
// ("TEXT:{text,json}"), space separated; empty for a free value.
std::string choice_words(const CLI::Option& opt) {
    const std::string type = opt.get_type_name();
    const auto open = type.find('{');
    const auto close = type.find('}', open == std::string::npos ? 0 : open);
    if (open == std::string::npos || close == std::string::npos) return "";
    std::string words = type.substr(open + 1, close - open - 1);
    std::replace(words.begin(), words.end(), ',', ' ');
    return words;
}

// `case "$sub $prev"` lines completing the values of options with choices.
std::string value_cases(const CLI::App& app, const std::string& sub_name) {
    std::string out;
    for (const auto* opt : app.get_options()) {
        const std::string words = choice_words(*opt);
        if (words.empty()) continue;
        for (const auto& l : opt->get_lnames())
            out += "    \"" + sub_name + " --" + l + "\") COMPREPLY=($(compgen -W \"" + words +
                   "\" -- \"$cur\")); return ;;\n";
    }
    return out;
}

// The commands that act on an existing cluster: their positional and --cluster complete cluster names.
std::string cluster_commands() {
    std::string out;
    for (const auto& e : command_table()) {
        const std::string name = e.name;
        if (e.needs != Needs::nothing && name.find(' ') == std::string::npos) out += " " + name;
    }
    return out + " ";
}

} // namespace

std::string completion_script(const CLI::App& app, const std::string& shell) {
    std::string commands, cases, values = value_cases(app, "");
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        commands += " " + sub->get_name();
        cases += "    " + sub->get_name() + ") opts=\"" + option_words(*sub) + "\" ;;\n";
        values += value_cases(*sub, sub->get_name());
    }
    std::string bash =
        "# ddl's completion for bash, written by `ddl completion bash` from its command table.\n"
        "# The names of the clusters in the state folder (--state-dir on the line, else $DDL_STATE_DIR, else "
        "./.ddl where it exists, else ~/.ddl).\n"
        "_ddl_clusters() {\n"
        "  local d=$DDL_STATE_DIR i f\n"
        "  [[ -n $d ]] || { [[ -d .ddl ]] && d=.ddl || d=$HOME/.ddl; }\n"
        "  for ((i = 1; i < COMP_CWORD; i++)); do [[ ${COMP_WORDS[i]} == --state-dir ]] && "
        "d=${COMP_WORDS[i+1]}; done\n"
        "  for f in \"$d\"/*/state.json; do [[ -e $f ]] && f=${f%/state.json} && echo \"${f##*/}\"; done\n"
        "}\n"
        "_ddl() {\n"
        "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} sub='' opts='' i\n"
        "  local commands=\"" +
        commands +
        "\"\n"
        "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
        "    case \" $commands \" in *\" ${COMP_WORDS[i]} \"*) sub=${COMP_WORDS[i]}; break ;; esac\n"
        "  done\n"
        "  case \"$prev\" in\n"
        "    --cluster) COMPREPLY=($(compgen -W \"$(_ddl_clusters)\" -- \"$cur\")); return ;;\n"
        "  esac\n"
        "  case \"$sub $prev\" in\n" +
        values +
        "  esac\n"
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
        "    case \"" +
        cluster_commands() +
        "\" in *\" $sub \"*) COMPREPLY+=($(compgen -W \"$(_ddl_clusters)\" -- \"$cur\")) ;; esac\n"
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
