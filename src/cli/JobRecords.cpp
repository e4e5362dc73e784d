#include "cli/JobRecords.hpp"

#include "util/Strings.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

namespace ddl::cli {

bool job_state_final(const std::string& state) {
    return state == "succeeded" || state == "failed" || state == "cancelled";
}

namespace {

std::string text_or_empty(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<int> int_or_none(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<int>();
}

} // namespace

Result<std::vector<JobRecord>> parse_job_records(const std::string& json) {
    auto j = nlohmann::json::parse(json, nullptr, false);
    if (j.is_discarded() || !j.is_array()) return Error{"the master's job list is not a JSON list"};
    static const std::set<std::string> k_states{"queued", "running", "succeeded", "failed", "cancelled"};
    std::vector<JobRecord> out;
    for (const auto& o : j) {
        if (!o.is_object() || !o.contains("id") || !o["id"].is_number_integer())
            return Error{"a job in the master's list has no id"};
        JobRecord r;
        r.id = o["id"].get<int>();
        const std::string where = "job " + std::to_string(r.id) + ": ";
        r.name = text_or_empty(o, "name");
        r.state = text_or_empty(o, "state");
        if (!k_states.count(r.state)) return Error{where + "unknown state \"" + r.state + "\""};
        if (auto c = o.find("command"); c != o.end() && c->is_array())
            for (const auto& w : *c)
                if (w.is_string()) r.command.push_back(w.get<std::string>());
        r.ranks = int_or_none(o, "ranks").value_or(0);
        r.submitted = text_or_empty(o, "submitted");
        r.started = text_or_empty(o, "started");
        r.ended = text_or_empty(o, "ended");
        r.exit_code = int_or_none(o, "exit_code");
        r.failed_rank = int_or_none(o, "failed_rank");
        r.origin = text_or_empty(o, "origin");
        r.restarts = int_or_none(o, "restarts").value_or(0);
        r.max_restarts = int_or_none(o, "max_restarts").value_or(0);
        if (job_state_final(r.state) && r.ended.empty())
            return Error{where + r.state + " without an end time"};
        if (r.state == "succeeded" && r.exit_code.value_or(0) != 0)
            return Error{where + "succeeded with exit code " + std::to_string(*r.exit_code)};
        if (r.failed_rank && r.state != "failed")
            return Error{where + "a failed rank in a job that is " + r.state};
        if ((r.state == "running" || job_state_final(r.state)) && r.state != "cancelled" && r.started.empty())
            return Error{where + r.state + " without a start time"};
        out.push_back(std::move(r));
    }
    return out;
}

std::string job_table(const std::vector<JobRecord>& jobs) {
    // Every field but the id is text from the master's records (a name and a command the submitter chose):
    // escape codes in them are shown escaped, never sent to the terminal.
    auto row = [](const std::string& id, const std::string& name, const std::string& state,
                  const std::string& ranks, const std::string& started, const std::string& ended,
                  const std::string& exit, const std::string& command) {
        auto shown = [](const std::string& text) { return printable_utf8(text, std::string::npos); };
        std::string cells[] = {shown(id),    printable_utf8(name, 16), shown(state),
                               shown(ranks), shown(started),           shown(ended),
                               shown(exit)};
        char buf[512];
        std::snprintf(buf, sizeof buf, "%-4s %-16s %-10s %-5s %-20s %-20s %-9s ", cells[0].c_str(),
                      cells[1].c_str(), cells[2].c_str(), cells[3].c_str(), cells[4].c_str(),
                      cells[5].c_str(), cells[6].c_str());
        return std::string(buf) + shown(command) + "\n";
    };
    std::string out = row("ID", "NAME", "STATE", "RANKS", "STARTED", "ENDED", "EXIT", "COMMAND");
    for (const auto& j : jobs) {
        std::string exit = j.exit_code ? std::to_string(*j.exit_code) : "-";
        if (j.failed_rank) exit += " (rank " + std::to_string(*j.failed_rank) + ")";
        if (j.restarts > 0)
            exit += ", restarted " + std::to_string(j.restarts) + "/" + std::to_string(j.max_restarts);
        out += row(std::to_string(j.id), j.name, j.state, std::to_string(j.ranks),
                   j.started.empty() ? "-" : j.started, j.ended.empty() ? "-" : j.ended, exit,
                   shell_join(j.command));
    }
    return out;
}

Result<int> parse_job_id(const std::string& text) {
    auto n = parse_int(text);
    if (!n || *n < 1 || *n > 1'000'000'000 || text.find_first_not_of("0123456789") != std::string::npos)
        return Error{"\"" + text + "\" is not a job id (a number, as `ddl jobs` lists them)"};
    return static_cast<int>(*n);
}

std::string submit_command(const std::string& name, int np, bool beside, const std::string& workdir,
                           const std::vector<std::string>& command, int max_restarts) {
    std::vector<std::string> argv{k_ddl_run, "--env-stdin", "--origin", "ddl run -d"};
    if (!name.empty()) argv.insert(argv.end(), {"--name", name});
    if (np > 0) argv.insert(argv.end(), {"--np", std::to_string(np)});
    if (beside) argv.push_back("--beside");
    if (!workdir.empty()) argv.insert(argv.end(), {"--workdir", workdir});
    if (max_restarts > 0) argv.insert(argv.end(), {"--max-restarts", std::to_string(max_restarts)});
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return shell_join(argv);
}

std::string env_block(const std::map<std::string, std::string>& env) {
    std::string out;
    for (const auto& [name, value] : env) {
        out += name + "=" + value;
        out.push_back('\0');
    }
    return out;
}

} // namespace ddl::cli
