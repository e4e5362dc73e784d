#pragma once
// Terraform's (and OpenTofu's) machine-readable UI: the JSON-lines stream `plan -json`, `apply -json`
// and `destroy -json` print. TerraformStream turns it, one line at a time, into events and keeps what
// ddl reports: per-resource progress and failures naming the resource and the provider's message.
// It never throws and accepts any bytes (a line that is not a message is kept as plain output), so
// it can be fed untrusted or truncated input.
#include "util/Result.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddl {

struct TerraformEvent {
    enum class Kind {
        version,        // first line: tool version and UI version
        log,            // free text
        diagnostic,     // warning or error, maybe about one resource
        planned_change, // plan: one resource will change
        change_summary, // plan/apply/destroy totals
        apply_start,    // a resource operation began (also used by destroy)
        apply_progress, // ... is still running (every ~10 s)
        apply_complete, // ... finished
        apply_errored,  // ... failed (the reason follows as a diagnostic)
        outputs,        // output values after apply
        other,          // a message type ddl does not use (refresh_*, provision_*, resource_drift, ...)
    };
    Kind kind = Kind::other;
    std::string type;     // the message's "type" as written
    std::string level;    // @level
    std::string message;  // @message: Terraform's own one-line rendering
    std::string resource; // hook.resource.addr, change.resource.addr or diagnostic.address
    std::string action;   // create, update, delete, replace, read, noop, ...
    double elapsed_s = 0;
    std::string id; // apply_complete: id_value
    // diagnostic
    std::string severity; // error | warning
    std::string summary;
    std::string detail;
    // change_summary
    int add = 0, change = 0, remove = 0;
    std::string operation; // plan | apply | destroy
    // version
    std::string tool_version, ui_version;
};

struct TerraformResourceProgress {
    enum class State { planned, running, done, failed };
    State state = State::planned;
    std::string action;
    double elapsed_s = 0;
    std::string id;
};

struct TerraformFailure {
    std::string resource; // empty: not tied to one resource (configuration, provider setup)
    std::string action;
    std::string message; // "summary: detail" as the provider reported it
};

class TerraformStream {
public:
    // Parses one line (without its newline). Returns the event, or nothing for a line that is not a
    // UI message (kept in plain_lines()). An unsupported UI major version is recorded as a failure.
    std::optional<TerraformEvent> feed_line(std::string_view line);

    const std::map<std::string, TerraformResourceProgress>& resources() const { return m_resources; }
    // Errored resources (with the diagnostic that names them, when it came) and error diagnostics that
    // name no errored resource, in the order they arrived.
    std::vector<TerraformFailure> failures() const;
    std::vector<std::string> warnings() const;
    std::optional<TerraformEvent> last_summary() const { return m_summary; }
    const std::vector<std::string>& plain_lines() const { return m_plain; }
    // One line per failure, for an error message.
    std::string failure_text() const;

private:
    void record_diagnostic(const TerraformEvent& e);
    std::map<std::string, TerraformResourceProgress> m_resources;
    std::vector<TerraformFailure> m_errored;   // from apply_errored, message filled by a diagnostic
    std::vector<TerraformFailure> m_unmatched; // error diagnostics of no errored resource
    std::vector<std::string> m_warnings;
    std::optional<TerraformEvent> m_summary;
    std::vector<std::string> m_plain;
};

} // namespace ddl
