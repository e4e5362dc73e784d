#include "core/Diagnostics.hpp"

#include <algorithm>

namespace ddl {

void Diagnostics::error(SourcePos pos, std::string message, std::string hint) {
    m_items.push_back({Severity::error, std::move(pos), std::move(message), std::move(hint)});
}

void Diagnostics::warning(SourcePos pos, std::string message, std::string hint) {
    m_items.push_back({Severity::warning, std::move(pos), std::move(message), std::move(hint)});
}

bool Diagnostics::has_errors() const {
    return std::any_of(m_items.begin(), m_items.end(),
                       [](const auto& d) { return d.severity == Severity::error; });
}

std::vector<Diagnostic> Diagnostics::sorted() const {
    auto out = m_items;
    std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
        return std::tie(a.pos.line, a.pos.column) < std::tie(b.pos.line, b.pos.column);
    });
    return out;
}

std::string Diagnostics::format_text() const {
    std::string out;
    for (const auto& d : sorted()) {
        out += d.pos.file;
        if (d.pos.line > 0) out += ":" + std::to_string(d.pos.line);
        if (d.pos.column > 0) out += ":" + std::to_string(d.pos.column);
        out += d.severity == Severity::error ? ": error: " : ": warning: ";
        out += d.message + "\n";
        if (!d.hint.empty()) out += "hint: " + d.hint + "\n";
    }
    return out;
}

nlohmann::json Diagnostics::to_json() const {
    auto arr = nlohmann::json::array();
    for (const auto& d : sorted()) {
        nlohmann::json j{{"severity", d.severity == Severity::error ? "error" : "warning"},
                         {"file", d.pos.file},
                         {"line", d.pos.line},
                         {"column", d.pos.column},
                         {"message", d.message}};
        if (!d.hint.empty()) j["hint"] = d.hint;
        arr.push_back(std::move(j));
    }
    return arr;
}

} // namespace ddl
