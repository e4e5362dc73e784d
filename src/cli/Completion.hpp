#pragma once
// `ddl completion bash|zsh`: a completion script written from the command table itself, so every command
// and option the parser knows is offered, and nothing else.
#include <string>

namespace CLI {
class App;
}

namespace ddl::cli {

// The script for `shell` ("bash" or "zsh"; zsh loads the bash one through bashcompinit).
std::string completion_script(const CLI::App& app, const std::string& shell);

} // namespace ddl::cli
