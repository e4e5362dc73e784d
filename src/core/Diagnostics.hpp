#pragma once
// User mistakes are diagnostics: collected, all reported, then the command stops.
// Positions are 1-based everywhere in ddl; conversion from yaml-cpp's 0-based marks happens in spec/.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ddl {

enum class Severity { error, warning };

struct SourcePos {
    std::string file;
    int line = 0;   // 1-based; 0 when unknown
    int column = 0; // 1-based; 0 when unknown
};

struct Diagnostic {
    Severity severity = Severity::error;
    SourcePos pos;
    std::string message;
    std::string hint; // optional
};

class Diagnostics {
public:
    void error(SourcePos pos, std::string message, std::string hint = {});
    void warning(SourcePos pos, std::string message, std::string hint = {});
    bool has_errors() const;
    const std::vector<Diagnostic>& all() const { return m_items; }
    // Sorted by line then column, so the report reads top to bottom.
    std::vector<Diagnostic> sorted() const;
    // "file:line:col: error: message\nhint: ...\n" for each, sorted.
    std::string format_text() const;
    nlohmann::json to_json() const;

private:
    std::vector<Diagnostic> m_items;
};

// Exit codes shared by every command.
namespace exit_code {
constexpr int k_ok = 0;
constexpr int k_failure = 1;
constexpr int k_bad_input = 2;
constexpr int k_partial = 3;
} // namespace exit_code

} // namespace ddl
