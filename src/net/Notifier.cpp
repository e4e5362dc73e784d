#include "net/Notifier.hpp"

#include "core/Log.hpp"
#include "core/Url.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <cstdlib>
#include <nlohmann/json.hpp>

namespace ddl {
namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

} // namespace

Status validate_notify_target(const std::string& t) {
    if (starts_with(t, "mailto:")) {
        auto addr = t.substr(7);
        if (addr.find('@') == std::string::npos || addr.find_first_of(" <>,\r\n") != std::string::npos)
            return Error{"--notify " + t + ": not an e-mail address"};
        return {};
    }
    auto url = check_service_url(t, false, true);
    if (url) return {};
    return Error{"--notify " + t + ": the webhook URL " + url.error().message +
                 "; use mailto:ADDRESS or an https:// webhook URL (plain http only to loopback)"};
}

Result<SmtpSettings> smtp_settings_from_env() {
    SmtpSettings s;
    s.url = env("DDL_SMTP_URL");
    s.from = env("DDL_SMTP_FROM");
    s.user = env("DDL_SMTP_USER");
    s.password = env("DDL_SMTP_PASSWORD");
    ::unsetenv("DDL_SMTP_PASSWORD");
    if (auto file = env("DDL_SMTP_PASSWORD_FILE"); !file.empty()) {
        auto text = read_file(file);
        if (!text) return text.error();
        s.password = trim(*text);
    }
    s.starttls = env("DDL_SMTP_STARTTLS") == "1";
    if (s.url.empty()) return Error{"mail notices need DDL_SMTP_URL (e.g. smtp://mail.example.org:587)"};
    if (s.from.empty()) return Error{"mail notices need DDL_SMTP_FROM (the sender address)"};
    log::register_secret(s.password);
    return s;
}

bool needs_smtp(const std::vector<std::string>& targets) {
    for (const auto& t : targets)
        if (starts_with(t, "mailto:")) return true;
    return false;
}

std::string notice_subject(const Notice& n) {
    return "[ddl] smoke test " + std::string(n.passed ? "passed" : "FAILED") + ": cluster " + n.cluster +
           (n.passed ? "" : " (" + std::to_string(n.failed_checks.size()) + " failed)");
}

// The body of Slack's incoming webhooks ("Sending messages using incoming webhooks",
// https://api.slack.com/messaging/webhooks: a JSON POST whose `text` is the message; Mattermost's incoming
// webhooks take the same `text`, https://developers.mattermost.com/integrate/webhooks/incoming/). The other
// keys are ddl's own structured copy of the result for receivers that read JSON; chat services ignore them.
std::string notice_json(const Notice& n) {
    nlohmann::json j{{"text", notice_subject(n) + "\n" + join(n.failed_checks, "\n") + "\nlogs: " + n.logs},
                     {"cluster", n.cluster},
                     {"status", n.passed ? "passed" : "failed"},
                     {"failed_checks", n.failed_checks},
                     {"logs", n.logs}};
    return j.dump();
}

std::vector<std::string> send_notices(const Notice& n, const std::vector<std::string>& targets,
                                      HttpClient& http, const std::optional<SmtpSettings>& smtp) {
    std::vector<std::string> errors;
    for (const auto& t : targets) {
        if (starts_with(t, "mailto:")) {
            if (!smtp) {
                errors.push_back(t + ": no SMTP settings were read before the run");
                continue;
            }
            MailMessage m{{t.substr(7)}, notice_subject(n), n.summary + "\nLogs: " + n.logs + "\n"};
            if (auto s = send_mail(*smtp, m, std::chrono::seconds(30)); !s)
                errors.push_back(t + ": " + s.error().message);
        } else {
            auto r = http.post_json(t, notice_json(n), std::chrono::seconds(30));
            if (!r)
                errors.push_back(t + ": " + r.error().message);
            else if (r->status < 200 || r->status >= 300)
                errors.push_back(t + ": HTTP " + std::to_string(r->status));
        }
    }
    return errors;
}

} // namespace ddl
