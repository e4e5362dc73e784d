#include "runtime/NodeEnv.hpp"

#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <cctype>
#include <cerrno>
#include <sys/stat.h>

namespace ddl::runtime {

namespace {

bool is_shell_name(const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
    for (char c : s)
        if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return false;
    return true;
}

std::string unquote(const std::string& v) {
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
        return v.substr(1, v.size() - 2);
    return v;
}

} // namespace

const NodeEnvValue* NodeEnv::find(const std::string& key) const {
    auto it = values.find(key);
    return it == values.end() || it->second.value.empty() ? nullptr : &it->second;
}

ddl::Result<NodeEnv> parse_node_env(const std::string& text, const std::string& path) {
    NodeEnv env;
    env.path = path;
    int line_no = 0;
    for (const std::string& raw : split_lines(text)) {
        ++line_no;
        const std::string line = trim(raw);
        if (line.empty() || line[0] == '#') continue;
        const auto eq = line.find('=');
        const std::string key = eq == std::string::npos ? std::string() : trim(line.substr(0, eq));
        if (!is_shell_name(key))
            return ddl::Error{path + ":" + std::to_string(line_no) + ": not a KEY=VALUE line: '" +
                              printable_utf8(line, 80) + "'"};
        env.values[key] = NodeEnvValue{unquote(trim(line.substr(eq + 1))), line_no};
    }
    return env;
}

ddl::Result<std::optional<NodeEnv>> read_node_env(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) return std::optional<NodeEnv>{};
        return ddl::errno_error("cannot read " + path);
    }
    // ddl writes a few hundred bytes; anything near this is not the file ddl wrote.
    auto text = read_file_limited(path, std::size_t{1} << 20);
    if (!text) return text.error();
    auto env = parse_node_env(*text, path);
    if (!env) return env.error();
    return std::optional<NodeEnv>{std::move(*env)};
}

} // namespace ddl::runtime
