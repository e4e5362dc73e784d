#include "net/Notifier.hpp"

#include "core/Log.hpp"
#include "support/ScriptedHttp.hpp"
#include "util/Files.hpp"
#include "util/Process.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>

using namespace ddl;

namespace {
void clear_smtp_env() {
    for (const char* v : {"DDL_SMTP_URL", "DDL_SMTP_FROM", "DDL_SMTP_USER", "DDL_SMTP_PASSWORD",
                          "DDL_SMTP_PASSWORD_FILE", "DDL_SMTP_STARTTLS"})
        ::unsetenv(v);
}
} // namespace

TEST_CASE("the SMTP password is read once, redacted, and not inherited by subprocesses") {
    clear_smtp_env();
    const std::string secret = "smtp-Marker-7f3a9c";
    ::setenv("DDL_SMTP_URL", "smtp://127.0.0.1:2525", 1);
    ::setenv("DDL_SMTP_FROM", "ddl@example.org", 1);
    ::setenv("DDL_SMTP_USER", "ci", 1);
    ::setenv("DDL_SMTP_PASSWORD", secret.c_str(), 1);
    auto s = smtp_settings_from_env();
    REQUIRE(s.ok());
    CHECK(s->password == secret);
    CHECK(s->user == "ci");
    CHECK(std::getenv("DDL_SMTP_PASSWORD") == nullptr);
    SystemProcessRunner proc;
    auto env = proc.run({.argv = {"env"}});
    REQUIRE(env.ok());
    CHECK(env->out.find(secret) == std::string::npos);
    CHECK(env->out.find("DDL_SMTP_USER=ci") != std::string::npos); // the rest of the environment is inherited
    CHECK(log::redact("pw " + secret) == "pw ***");
    clear_smtp_env();
}

TEST_CASE("the SMTP password file wins over the variable and is trimmed; a missing file names itself") {
    clear_smtp_env();
    TempDir dir;
    std::string file = dir.path() + "/pw";
    REQUIRE(write_file_atomic(file, "from-file-Secret\n", 0600).ok());
    ::setenv("DDL_SMTP_URL", "smtp://127.0.0.1:2525", 1);
    ::setenv("DDL_SMTP_FROM", "ddl@example.org", 1);
    ::setenv("DDL_SMTP_PASSWORD", "from-env-Secret", 1);
    ::setenv("DDL_SMTP_PASSWORD_FILE", file.c_str(), 1);
    auto s = smtp_settings_from_env();
    REQUIRE(s.ok());
    CHECK(s->password == "from-file-Secret");
    ::setenv("DDL_SMTP_PASSWORD_FILE", (dir.path() + "/missing").c_str(), 1);
    auto missing = smtp_settings_from_env();
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().message.find("/missing") != std::string::npos);
    clear_smtp_env();
}

TEST_CASE("mail settings without a server or a sender are refused with the variable to set") {
    clear_smtp_env();
    auto none = smtp_settings_from_env();
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().message.find("DDL_SMTP_URL") != std::string::npos);
    ::setenv("DDL_SMTP_URL", "smtp://127.0.0.1:2525", 1);
    auto no_from = smtp_settings_from_env();
    REQUIRE_FALSE(no_from.ok());
    CHECK(no_from.error().message.find("DDL_SMTP_FROM") != std::string::npos);
    clear_smtp_env();
}

TEST_CASE("a mailto: target without settings read before the run is reported, not sent") {
    test::ScriptedHttp http; // answers nothing
    CHECK(needs_smtp({"https://x.example.org/h", "mailto:a@example.org"}));
    CHECK_FALSE(needs_smtp({"https://x.example.org/h"}));
    Notice n{"c", false, {"ssh (worker1): down"}, "summary", "logs"};
    auto errors = send_notices(n, {"mailto:a@example.org"}, http, std::nullopt);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].find("mailto:a@example.org: no SMTP settings") == 0);
}
