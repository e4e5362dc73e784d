#include "state/KnownFolders.hpp"

#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

using namespace ddl;

namespace {

// Sets an environment variable for one test case, and puts the old value back.
class EnvFor {
public:
    EnvFor(const char* name, const std::string& value) : m_name(name) {
        if (const char* old = std::getenv(name)) m_old = old;
        ::setenv(name, value.c_str(), 1);
    }
    ~EnvFor() {
        if (m_old)
            ::setenv(m_name, m_old->c_str(), 1);
        else
            ::unsetenv(m_name);
    }
    EnvFor(const EnvFor&) = delete;
    EnvFor& operator=(const EnvFor&) = delete;

private:
    const char* m_name;
    std::optional<std::string> m_old;
};

// Runs in `dir` for one test case.
class CwdFor {
public:
    explicit CwdFor(const std::string& dir) : m_old(std::filesystem::current_path()) {
        std::filesystem::current_path(dir);
    }
    ~CwdFor() { std::filesystem::current_path(m_old); }
    CwdFor(const CwdFor&) = delete;
    CwdFor& operator=(const CwdFor&) = delete;

private:
    std::filesystem::path m_old;
};

} // namespace

TEST_CASE("the default state folder is ./.ddl where it exists, else ~/.ddl") {
    TempDir dir;
    REQUIRE(make_dirs(dir.path() + "/home").ok());
    REQUIRE(make_dirs(dir.path() + "/project").ok());
    EnvFor home("HOME", dir.path() + "/home");
    CwdFor cwd(dir.path() + "/project");
    CHECK(default_state_folder() == dir.path() + "/home/.ddl");
    REQUIRE(make_dirs(dir.path() + "/project/.ddl").ok());
    CHECK(default_state_folder() == ".ddl");
}

TEST_CASE("without HOME the default state folder is ./.ddl") {
    const char* old = std::getenv("HOME");
    const std::string saved = old ? old : "";
    ::unsetenv("HOME");
    CHECK(default_state_folder() == ".ddl");
    CHECK(known_folders_file().empty() == (std::getenv("XDG_STATE_HOME") == nullptr));
    if (old) ::setenv("HOME", saved.c_str(), 1);
}

TEST_CASE("each state folder deployed from is recorded once, absolute, in a 0600 file") {
    TempDir dir;
    EnvFor xdg("XDG_STATE_HOME", dir.path() + "/xdg");
    CHECK(known_folders_file() == dir.path() + "/xdg/ddl/state-folders");
    CHECK(known_state_folders().empty()); // no file yet
    REQUIRE(make_dirs(dir.path() + "/a/.ddl").ok());
    REQUIRE(make_dirs(dir.path() + "/b").ok());
    {
        CwdFor cwd(dir.path() + "/a");
        REQUIRE(remember_state_folder(".ddl").ok());
        REQUIRE(remember_state_folder("./.ddl/").ok()); // the same folder, spelled otherwise
    }
    REQUIRE(remember_state_folder(dir.path() + "/b").ok());
    REQUIRE(remember_state_folder(dir.path() + "/b").ok());
    const std::vector<std::string> want{dir.path() + "/a/.ddl", dir.path() + "/b"};
    CHECK(known_state_folders() == want);
    auto text = read_file(known_folders_file());
    REQUIRE(text.ok());
    CHECK(*text == dir.path() + "/a/.ddl\n" + dir.path() + "/b\n");
    struct stat st {};
    REQUIRE(::stat(known_folders_file().c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    REQUIRE(::stat((dir.path() + "/xdg/ddl").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    // A folder since removed is left out; a line that is not an absolute path is ignored.
    REQUIRE(remove_tree(dir.path() + "/b").ok());
    REQUIRE(write_file_atomic(known_folders_file(), *text + "relative/.ddl\n").ok());
    CHECK(known_state_folders() == std::vector<std::string>{dir.path() + "/a/.ddl"});
}
