#include "terraform/TerraformStream.hpp"

#include "util/Strings.hpp"

#include <nlohmann/json.hpp>

namespace ddl {
namespace {

using Json = nlohmann::json;

// Typed lookups that never throw: a missing key or a value of another type gives the fallback.
std::string str(const Json& j, const char* key) {
    if (!j.is_object()) return "";
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}
const Json& obj(const Json& j, const char* key) {
    static const Json empty = Json::object();
    if (!j.is_object()) return empty;
    auto it = j.find(key);
    return it != j.end() && it->is_object() ? *it : empty;
}
double num(const Json& j, const char* key) {
    if (!j.is_object()) return 0;
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : 0;
}
int count(const Json& j, const char* key) {
    double v = num(j, key);
    return v >= 0 && v < 1e9 ? static_cast<int>(v) : 0;
}

TerraformEvent::Kind kind_of(const std::string& type) {
    using K = TerraformEvent::Kind;
    static const std::map<std::string, K> kinds{
        {"version", K::version},
        {"log", K::log},
        {"diagnostic", K::diagnostic},
        {"planned_change", K::planned_change},
        {"change_summary", K::change_summary},
        {"apply_start", K::apply_start},
        {"apply_progress", K::apply_progress},
        {"apply_complete", K::apply_complete},
        {"apply_errored", K::apply_errored},
        {"outputs", K::outputs},
    };
    auto it = kinds.find(type);
    return it == kinds.end() ? K::other : it->second;
}

std::string diagnostic_text(const TerraformEvent& e) {
    std::string detail = trim(e.detail);
    // Multi-line provider messages read better on one line in a phase failure.
    for (auto& c : detail)
        if (c == '\n') c = ' ';
    return detail.empty() ? e.summary : e.summary + ": " + detail;
}

} // namespace

// A warning is kept as a line; an error goes to the failed resource it names (or waits for it).
void TerraformStream::record_diagnostic(const TerraformEvent& e) {
    if (e.severity == "warning") {
        m_warnings.push_back(e.resource.empty() ? diagnostic_text(e)
                                                : e.resource + ": " + diagnostic_text(e));
        return;
    }
    if (e.severity != "error") return;
    if (!e.resource.empty()) {
        for (auto& f : m_errored) {
            if (f.resource == e.resource && f.message.empty()) {
                f.message = diagnostic_text(e);
                return;
            }
        }
    }
    m_unmatched.push_back({e.resource, "", diagnostic_text(e)});
}

std::optional<TerraformEvent> TerraformStream::feed_line(std::string_view line) {
    std::string text = trim(line);
    if (text.empty()) return std::nullopt;
    Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("type")) {
        m_plain.emplace_back(text);
        return std::nullopt;
    }
    TerraformEvent e;
    e.type = str(j, "type");
    e.kind = kind_of(e.type);
    e.level = str(j, "@level");
    e.message = str(j, "@message");
    const Json& hook = obj(j, "hook");
    const Json& hook_resource = obj(hook, "resource");
    using K = TerraformEvent::Kind;
    switch (e.kind) {
    case K::version: {
        e.tool_version = str(j, "terraform");
        if (e.tool_version.empty()) e.tool_version = str(j, "tofu");
        e.ui_version = str(j, "ui");
        // The UI's contract: reject a major version we do not know.
        if (!e.ui_version.empty() && !starts_with(e.ui_version, "0.") && !starts_with(e.ui_version, "1."))
            m_unmatched.push_back({"", "",
                                   "unsupported machine-readable UI version " + e.ui_version +
                                       " (ddl reads 1.x); use a Terraform/OpenTofu 1.x release"});
        break;
    }
    case K::diagnostic: {
        const Json& d = obj(j, "diagnostic");
        e.severity = str(d, "severity");
        e.summary = str(d, "summary");
        e.detail = str(d, "detail");
        e.resource = str(d, "address");
        record_diagnostic(e);
        break;
    }
    case K::planned_change: {
        const Json& change = obj(j, "change");
        e.resource = str(obj(change, "resource"), "addr");
        e.action = str(change, "action");
        if (!e.resource.empty()) {
            auto& r = m_resources[e.resource];
            r.action = e.action;
        }
        break;
    }
    case K::change_summary: {
        const Json& c = obj(j, "changes");
        e.add = count(c, "add");
        e.change = count(c, "change");
        e.remove = count(c, "remove");
        e.operation = str(c, "operation");
        m_summary = e;
        break;
    }
    case K::apply_start:
    case K::apply_progress:
    case K::apply_complete:
    case K::apply_errored: {
        e.resource = str(hook_resource, "addr");
        e.action = str(hook, "action");
        e.elapsed_s = num(hook, "elapsed_seconds");
        e.id = str(hook, "id_value");
        if (e.resource.empty()) break;
        auto& r = m_resources[e.resource];
        if (!e.action.empty()) r.action = e.action;
        r.elapsed_s = e.elapsed_s;
        if (e.kind == K::apply_complete) {
            r.state = TerraformResourceProgress::State::done;
            r.id = e.id;
        } else if (e.kind == K::apply_errored) {
            r.state = TerraformResourceProgress::State::failed;
            m_errored.push_back({e.resource, e.action, ""});
            // A diagnostic naming this resource may have come first (Terraform writes them as they happen).
            for (auto it = m_unmatched.begin(); it != m_unmatched.end(); ++it) {
                if (it->resource == e.resource) {
                    m_errored.back().message = it->message;
                    m_unmatched.erase(it);
                    break;
                }
            }
        } else {
            r.state = TerraformResourceProgress::State::running;
        }
        break;
    }
    default:
        break;
    }
    return e;
}

std::vector<TerraformFailure> TerraformStream::failures() const {
    std::vector<TerraformFailure> out = m_errored;
    for (auto& f : out)
        if (f.message.empty()) f.message = "failed (no message from the provider)";
    out.insert(out.end(), m_unmatched.begin(), m_unmatched.end());
    return out;
}

std::vector<std::string> TerraformStream::warnings() const {
    return m_warnings;
}

std::string TerraformStream::failure_text() const {
    std::vector<std::string> lines;
    for (const auto& f : failures()) {
        std::string who =
            f.resource.empty() ? "" : f.resource + (f.action.empty() ? "" : " (" + f.action + ")");
        lines.push_back(who.empty() ? f.message : who + ": " + f.message);
    }
    return join(lines, "\n");
}

} // namespace ddl
