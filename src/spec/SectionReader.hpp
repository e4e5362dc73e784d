#pragma once
// YamlReader plus the value rules several sections share (rates, service URLs, key files, absolute
// paths), so a target's section parser in src/targets/<name>/ reports problems the way the rest does.
#include "spec/YamlReader.hpp"

#include <cstdint>
#include <string>

namespace ddl {

class SectionReader : public YamlReader {
public:
    SectionReader(std::string file, Diagnostics& diags, bool check_files)
        : YamlReader(std::move(file), diags), m_check_files(check_files) {}

    // `text` safe to quote in a message (printable_utf8): UTF-8 shown as such, control and invisible
    // characters escaped, at most 40 characters.
    static std::string printable(const std::string& text);
    // Whether files the spec names on this machine are checked (a spec from a file, not a stored one).
    bool checks_files() const { return m_check_files; }

    // A link rate ("1gbit") in [min, max] into `out`; "unlimited" (0) only when allowed.
    void rate(const YAML::Node& n, const std::string& key, const std::string& path, std::uint64_t& out,
              std::uint64_t min, std::uint64_t max, bool allow_unlimited);
    // A URL as libcurl parses it (core/Url): scheme, host, no user info; http only when `http_ok`.
    void url(const YAML::Node& n, const std::string& key, const std::string& path, bool http_ok,
             const std::string& hint, std::string& out, bool required = false,
             const std::string& missing_hint = "");
    // A private key ddl logs in with: it must be there when the spec is checked (unless files are not
    // checked: the spec stored with a deployed cluster), and not be the public half.
    void key_file(const YAML::Node& n, const std::string& key, const std::string& path, std::string& out);
    // An absolute path without "..", spaces or tabs.
    void abs_path(const YAML::Node& n, const std::string& key, const std::string& path, std::string& out);

private:
    bool m_check_files = true;
};

} // namespace ddl
