#pragma once
// Notices about a finished pipeline run: e-mail (mailto:ADDR, SMTP settings from the environment or
// a password file, never the command line) and webhooks (a JSON POST, https or loopback http).
#include "net/Curl.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddl {

struct Notice {
    std::string cluster;
    bool passed = false;
    std::vector<std::string> failed_checks; // "check (node): message"
    std::string summary;                    // one screen
    std::string logs;                       // where the logs are
};

// Checks a --notify target: "mailto:a@b" or an https:// URL (http:// only to loopback).
Status validate_notify_target(const std::string& target);

// SMTP settings from DDL_SMTP_URL, DDL_SMTP_FROM, DDL_SMTP_USER, DDL_SMTP_PASSWORD or
// DDL_SMTP_PASSWORD_FILE, DDL_SMTP_STARTTLS=1. The password is registered as a log secret, and
// DDL_SMTP_PASSWORD is removed from this process's environment so that no subprocess (ansible-playbook,
// the local nodes' sshd, hooks) inherits it: read the settings once, before starting any.
Result<SmtpSettings> smtp_settings_from_env();

// True when some target is a mailto: one (and so needs smtp_settings_from_env()).
bool needs_smtp(const std::vector<std::string>& targets);

std::string notice_subject(const Notice& n);
std::string notice_json(const Notice& n);

// Sends the notice to every target; returns one error line per target that failed. mailto: targets
// use `smtp` (from smtp_settings_from_env(), read before the run); without it they fail.
std::vector<std::string> send_notices(const Notice& n, const std::vector<std::string>& targets,
                                      HttpClient& http, const std::optional<SmtpSettings>& smtp);

} // namespace ddl
