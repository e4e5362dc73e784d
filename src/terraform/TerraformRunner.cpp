#include "terraform/TerraformRunner.hpp"

#include "util/Strings.hpp"

#include <algorithm>

namespace ddl {
namespace {

// "1.7.5" / "v1.7.5-beta1" -> {1, 7}; nullopt when unreadable.
std::optional<std::pair<int, int>> major_minor(std::string v) {
    if (!v.empty() && v[0] == 'v') v.erase(0, 1);
    auto parts = split(v, '.');
    if (parts.size() < 2) return std::nullopt;
    auto minor_text = parts[1].substr(0, parts[1].find_first_not_of("0123456789"));
    auto major = parse_int(parts[0]);
    auto minor = parse_int(minor_text);
    if (!major || !minor) return std::nullopt;
    return std::pair<int, int>{static_cast<int>(*major), static_cast<int>(*minor)};
}

std::string last_lines(const std::string& text, std::size_t n) {
    auto lines = split_lines(text);
    std::vector<std::string> kept;
    for (auto it = lines.rbegin(); it != lines.rend() && kept.size() < n; ++it)
        if (!trim(*it).empty()) kept.insert(kept.begin(), trim(*it));
    return join(kept, "\n");
}

} // namespace

bool TerraformTool::at_least(int major, int minor, int patch) const {
    std::string v = version;
    if (!v.empty() && v[0] == 'v') v.erase(0, 1);
    auto parts = split(v, '.');
    int have[3] = {0, 0, 0};
    for (std::size_t i = 0; i < 3 && i < parts.size(); ++i) {
        auto digits = parts[i].substr(0, parts[i].find_first_not_of("0123456789"));
        auto n = parse_int(digits);
        if (!n) return false;
        have[i] = static_cast<int>(*n);
    }
    const int want[3] = {major, minor, patch};
    return std::lexicographical_compare(want, want + 3, have, have + 3) || std::equal(want, want + 3, have);
}

Result<TerraformTool> TerraformRunner::find_tool(ProcessRunner& proc, const std::string& choice,
                                                 const std::string& setting) {
    std::vector<std::string> candidates =
        choice.empty() ? std::vector<std::string>{"terraform", "tofu"} : std::vector<std::string>{choice};
    std::string path;
    for (const auto& c : candidates) {
        path = find_in_path(c);
        if (!path.empty()) break;
    }
    if (path.empty()) {
        if (choice.empty())
            return Error{"neither terraform nor tofu is on PATH; install Terraform >= 1.5 "
                         "(https://developer.hashicorp.com/terraform/install) or OpenTofu "
                         "(https://opentofu.org/docs/intro/install/), or name one with --terraform-bin"};
        return Error{choice + " is not an executable on PATH; install it or fix " + setting +
                     " / --terraform-bin"};
    }
    auto r = proc.run({.argv = {path, "version", "-json"}, .timeout = std::chrono::seconds(60)});
    if (!r) return r.error();
    if (!r->success()) return Error{describe_failure({.argv = {path, "version", "-json"}}, *r)};
    auto j = nlohmann::json::parse(r->out, nullptr, false);
    std::string version;
    if (j.is_object()) {
        for (const char* key : {"terraform_version", "tofu_version"}) {
            auto it = j.find(key);
            if (it != j.end() && it->is_string()) {
                version = it->get<std::string>();
                break;
            }
        }
    }
    auto mm = major_minor(version);
    if (!mm)
        return Error{path + " version -json printed no version (got \"" + trim(r->out.substr(0, 200)) +
                     "\"); is it Terraform or OpenTofu?"};
    if (mm->first != k_min_major || mm->second < k_min_minor)
        return Error{path + " is version " + version + "; ddl's module needs 1.x from 1." +
                     std::to_string(k_min_minor) + " on"};
    std::string base = path.substr(path.rfind('/') + 1);
    return TerraformTool{path, base.find("tofu") != std::string::npos ? "tofu" : "terraform", version};
}

TerraformRunner::TerraformRunner(ProcessRunner& proc, TerraformTool tool, TerraformRunnerOptions opts,
                                 std::function<void(const TerraformEvent&)> on_event)
    : m_proc(proc), m_tool(std::move(tool)), m_opts(std::move(opts)), m_on_event(std::move(on_event)) {}

Command TerraformRunner::command(std::vector<std::string> args) const {
    Command c;
    c.argv.push_back(m_tool.path);
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    c.cwd = m_opts.work_dir;
    c.env_set = m_opts.env;
    // Non-interactive: never prompt, and word messages for automation.
    c.env_set["TF_IN_AUTOMATION"] = "1";
    c.env_set["TF_INPUT"] = "0";
    c.timeout = m_opts.step_timeout;
    return c;
}

Result<ProcessResult> TerraformRunner::run_json(std::vector<std::string> args, TerraformStream& stream) {
    Command c = command(std::move(args));
    c.on_stdout_line = [&](const std::string& line) {
        auto e = stream.feed_line(line);
        if (e && m_on_event) m_on_event(*e);
    };
    return m_proc.run(c);
}

Status TerraformRunner::failure(const std::string& step, const ProcessResult& r,
                                const TerraformStream& stream) const {
    std::string what = stream.failure_text();
    if (what.empty()) what = last_lines(r.err.empty() ? r.out : r.err, 5);
    if (r.timed_out)
        what = "timed out after " + std::to_string(m_opts.step_timeout.count() / 1000) + " s" +
               (what.empty() ? "" : "\n" + what);
    return Error{m_tool.name + " " + step + " failed" + (what.empty() ? "" : ":\n" + what)};
}

Status TerraformRunner::init() {
    auto r = m_proc.run(command({"init", "-input=false", "-no-color"}));
    if (!r) return r.error();
    if (!r->success()) {
        std::string why = last_lines(r->err.empty() ? r->out : r->err, 8);
        return Error{m_tool.name + " init failed" + (why.empty() ? "" : ":\n" + why)};
    }
    return {};
}

Result<TerraformEvent> TerraformRunner::plan(PlanFile file, const std::vector<std::string>& replace) {
    TerraformStream stream;
    std::vector<std::string> args{"plan", "-input=false"};
    if (file == PlanFile::write) args.emplace_back("-out=tfplan");
    for (const auto& address : replace)
        args.push_back("-replace=" + address);
    args.emplace_back("-json");
    auto r = run_json(args, stream);
    if (!r) return r.error();
    if (!r->success()) return failure("plan", *r, stream).error();
    auto summary = stream.last_summary();
    if (!summary) return Error{m_tool.name + " plan printed no change summary; is its output -json?"};
    m_planned.clear();
    for (const auto& [address, progress] : stream.resources())
        if (progress.action != "read" && progress.action != "noop" && !progress.action.empty())
            m_planned.push_back({progress.action, address});
    return *summary;
}

std::vector<std::string> TerraformRunner::changes_to_existing() const {
    std::vector<std::string> out;
    for (const auto& c : m_planned)
        if (c.action == "update" || c.action == "replace" || c.action == "delete")
            out.push_back(c.action + " " + c.address);
    return out;
}

Status TerraformRunner::apply() {
    TerraformStream stream;
    auto r = run_json({"apply", "-input=false", "-json", "tfplan"}, stream);
    if (!r) return r.error();
    if (!r->success() || !stream.failures().empty()) return failure("apply", *r, stream);
    return {};
}

Result<nlohmann::json> TerraformRunner::outputs() {
    auto r = m_proc.run(command({"output", "-json"}));
    if (!r) return r.error();
    if (!r->success()) return Error{m_tool.name + " output failed: " + last_lines(r->err, 5)};
    auto j = nlohmann::json::parse(r->out, nullptr, false);
    if (!j.is_object()) return Error{m_tool.name + " output -json printed no JSON object"};
    nlohmann::json values = nlohmann::json::object();
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (it->is_object() && it->contains("value")) values[it.key()] = (*it)["value"];
    }
    return values;
}

Status TerraformRunner::destroy() {
    TerraformStream stream;
    auto r = run_json({"destroy", "-auto-approve", "-input=false", "-json"}, stream);
    if (!r) return r.error();
    if (!r->success() || !stream.failures().empty()) return failure("destroy", *r, stream);
    return {};
}

Result<std::vector<std::string>> TerraformRunner::state_list() {
    auto r = m_proc.run(command({"state", "list"}));
    if (!r) return r.error();
    if (!r->success()) return Error{m_tool.name + " state list failed: " + last_lines(r->err, 5)};
    std::vector<std::string> out;
    for (const auto& line : split_lines(r->out))
        if (!trim(line).empty()) out.push_back(trim(line));
    return out;
}

Status TerraformRunner::destroy_all(int attempts, const std::function<void(int, const Status&)>& on_attempt) {
    Status last;
    for (int attempt = 1; attempt <= attempts; ++attempt) {
        last = destroy();
        if (on_attempt) on_attempt(attempt, last);
        if (last) break;
    }
    // Whatever destroy said, the state is the truth about what still exists.
    auto left = state_list();
    if (!left) return Error{(last ? "" : last.error().message + "\n") + left.error().message};
    // Data sources are read, not created: they are not left behind.
    std::vector<std::string> resources;
    std::copy_if(left->begin(), left->end(), std::back_inserter(resources), [](const std::string& a) {
        return !starts_with(a, "data.") && a.find(".data.") == std::string::npos;
    });
    if (!resources.empty())
        return Error{"still in the Terraform state after " + std::to_string(attempts) +
                     " destroy attempt(s): " + join(resources, ", ") +
                     (last ? "" : "\nlast error: " + last.error().message)};
    // Nothing left: the goal of destroy is met even if a run reported an error on the way.
    return {};
}

} // namespace ddl
