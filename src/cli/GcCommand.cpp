// `ddl gc`: destroys leaked clusters (by name prefix and age), as scheduled pipelines need.
#include "cli/CommandTable.hpp"
#include "cli/Confirm.hpp"
#include "core/Diagnostics.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace ddl::cli {
namespace {

struct GcArgs {
    std::string older_than = "24h";
    std::string prefix = "ci-";
    bool dry_run = false;
    bool yes = false;
};

void add_options(CLI::App& sub, GcArgs& a) {
    sub.add_option("--older-than", a.older_than, "Untouched for at least this long: 90s, 30m, 24h, 7d")
        ->capture_default_str();
    sub.add_option("--prefix", a.prefix, "Only clusters whose name starts with this")->capture_default_str();
    sub.add_flag("--dry-run", a.dry_run, "Only list what would be destroyed");
    sub.add_flag("-y,--yes", a.yes, "Destroy without asking (needed where there is no terminal: CI, cron)");
}

// "90s", "30m", "24h", "7d" -> seconds.
std::optional<long long> parse_age(const std::string& text) {
    if (text.size() < 2) return std::nullopt;
    auto n = parse_int(text.substr(0, text.size() - 1));
    // Bounded so that scaling to seconds cannot overflow.
    if (!n || *n < 0 || *n > 100LL * 366 * 86400) return std::nullopt;
    switch (text.back()) {
    case 's':
        return *n;
    case 'm':
        return *n * 60;
    case 'h':
        return *n * 3600;
    case 'd':
        return *n * 86400;
    default:
        return std::nullopt;
    }
}

struct Candidate {
    std::string name;
    long long idle_s = 0;
};

// Clusters with the prefix whose state was last written at least `age` seconds ago.
std::vector<Candidate> candidates(const StateStore& store, const std::string& prefix, long long age) {
    std::vector<Candidate> out;
    auto now = std::filesystem::file_time_type::clock::now();
    for (const auto& name : store.clusters()) {
        if (!starts_with(name, prefix)) continue;
        std::error_code ec;
        // The state file is rewritten by every command that changes the cluster: its age is the
        // time since the cluster was last touched.
        auto mtime = std::filesystem::last_write_time(store.cluster_dir(name) + "/state.json", ec);
        if (ec) continue;
        auto idle = std::chrono::duration_cast<std::chrono::seconds>(now - mtime).count();
        if (idle < age) continue;
        out.push_back({name, idle});
    }
    return out;
}

// Asked once for all of them (typing "yes") on a terminal; without one only -y destroys. nullopt: go on.
std::optional<int> confirm(const GcArgs& a, const std::vector<Candidate>& found) {
    if (a.yes || a.dry_run || found.empty()) return std::nullopt;
    std::vector<std::string> names;
    names.reserve(found.size());
    for (const auto& c : found)
        names.push_back(c.name);
    return confirm_destroy("ddl gc", std::to_string(found.size()) + " cluster(s): " + join(names, ", "),
                           "Type yes to destroy them: ", "yes",
                           "add -y (--yes), or --dry-run to only list them");
}

int gc(const Invocation& inv, const GcArgs& a) {
    auto age = parse_age(a.older_than);
    if (!age)
        return inv.fail("--older-than " + a.older_than + ": give a number with s, m, h or d, e.g. 24h",
                        exit_code::k_bad_input);
    StateStore store(inv.g.state_dir);
    const auto found = candidates(store, a.prefix, *age);
    if (auto rc = confirm(a, found)) return *rc;
    int failed = 0, removed = 0;
    auto report = nlohmann::json::array();
    // With --output json, stdout carries one JSON document: what each destroy prints goes to stderr.
    std::streambuf* saved_out = inv.g.json ? std::cout.rdbuf(std::cerr.rdbuf()) : nullptr;
    for (const auto& [name, idle] : found) {
        std::cout << (a.dry_run ? "would destroy " : "destroying ") << name << " (untouched for "
                  << idle / 3600 << " h)\n";
        std::string outcome = "would destroy";
        if (!a.dry_run) {
            bool ok = destroy_cluster(inv, name) == exit_code::k_ok;
            ++(ok ? removed : failed);
            outcome = ok ? "destroyed" : "failed";
        }
        report.push_back({{"cluster", name}, {"idle_s", idle}, {"outcome", outcome}});
    }
    std::cout << "gc: " << removed << " destroyed, " << failed << " failed\n";
    if (saved_out) {
        std::cout.rdbuf(saved_out);
        std::cout << nlohmann::json{{"clusters", report}, {"destroyed", removed}, {"failed", failed}}.dump(2)
                  << "\n";
    }
    return failed ? exit_code::k_partial : exit_code::k_ok;
}

} // namespace

CommandBody gc_command() {
    auto a = std::make_shared<GcArgs>();
    return {.add_options = [a](CLI::App& sub) { add_options(sub, *a); },
            .action = [a](Invocation& inv) { return gc(inv, *a); }};
}

} // namespace ddl::cli
