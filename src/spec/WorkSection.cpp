#include "spec/WorkSection.hpp"

#include "util/Strings.hpp"

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <system_error>

namespace ddl {
namespace {

const std::regex& shell_name() {
    static const std::regex re("^[A-Za-z_][A-Za-z0-9_]*$");
    return re;
}

void read_workdir(SectionReader& r, const YAML::Node& doc, const std::string& spec_file, WorkSpec& out) {
    auto w = r.string(doc, "workdir", "");
    if (!w) return;
    if (trim(*w).empty() || w->find('\n') != std::string::npos) {
        r.diags().error(r.pos(doc["workdir"]),
                        "workdir must be a folder's path (got \"" + SectionReader::printable(*w) + "\")",
                        "e.g. \"workdir: .\" (the spec's folder) or \"workdir: ./train\"");
        return;
    }
    namespace fs = std::filesystem;
    out.workdir = *w;
    out.workdir_path = *w;
    if (!r.checks_files()) return;
    fs::path p(*w);
    if (p.is_relative()) {
        std::error_code ec;
        const fs::path folder = fs::path(spec_file).parent_path();
        fs::path base = folder.empty() ? fs::current_path(ec) : fs::absolute(folder, ec);
        p = base / p;
    }
    p = p.lexically_normal();
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
        r.diags().error(r.pos(doc["workdir"]),
                        "workdir " + SectionReader::printable(*w) + " is not a folder (" + p.string() + ")",
                        "a relative workdir is read from the spec file's folder");
        return;
    }
    std::string text = p.string();
    while (text.size() > 1 && text.back() == '/')
        text.pop_back();
    out.workdir_path = text;
}

void read_setup(SectionReader& r, const YAML::Node& doc, WorkSpec& out) {
    const YAML::Node s = doc["setup"];
    if (!s.IsDefined()) return;
    std::vector<YAML::Node> programs;
    if (s.IsScalar()) {
        programs.push_back(s);
    } else if (s.IsSequence()) {
        for (std::size_t i = 0; i < s.size(); ++i)
            programs.push_back(s[i]);
    } else {
        r.diags().error(
            r.pos(s), "setup must be a shell program or a list of them (got " + YamlReader::describe(s) + ")",
            "e.g. \"setup: pip install -r requirements.txt\"");
        return;
    }
    for (std::size_t i = 0; i < programs.size(); ++i) {
        const auto& p = programs[i];
        std::string path = s.IsSequence() ? "setup[" + std::to_string(i) + "]" : "setup";
        if (!p.IsScalar() || trim(p.Scalar()).empty()) {
            r.diags().error(r.pos(p), path + " must be a shell program (got " + YamlReader::describe(p) + ")",
                            "a command line, or several lines in a block (setup: |)");
            continue;
        }
        out.setup.push_back(p.Scalar());
        out.setup_lines.push_back(r.pos(p).line);
    }
}

void read_env(SectionReader& r, const YAML::Node& doc, WorkSpec& out) {
    const YAML::Node e = doc["env"];
    if (!e.IsDefined()) return;
    if (!r.expect_map(e, "env", "e.g. env: {WANDB_PROJECT: mnist, WANDB_API_KEY: ${WANDB_API_KEY}}")) return;
    static const std::regex whole_ref(R"(^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$)");
    std::set<std::string> seen;
    for (auto it = e.begin(); it != e.end(); ++it) {
        const YAML::Node key = it->first;
        const YAML::Node value = it->second;
        if (!key.IsScalar()) {
            r.diags().error(r.pos(key), "keys in env must be variable names");
            continue;
        }
        const std::string& name = key.Scalar();
        const std::string path = "env." + name;
        if (!is_settable_env_name(name)) {
            r.diags().error(
                r.pos(key), "env: \"" + SectionReader::printable(name) + "\" cannot be set here",
                "a shell variable name (letters, digits, _); DDL_* and the launcher's RANK, "
                "WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT are set by ddl");
            continue;
        }
        if (!seen.insert(name).second) {
            r.diags().error(r.pos(key), "key \"" + path + "\" is given twice", "set each variable once");
            continue;
        }
        EnvVar v{.name = name};
        if (value.IsMap()) {
            r.check_keys(value, path, {"from_env"});
            auto from = r.string(value, "from_env", path, true,
                                 "the controller's variable to read, e.g. {from_env: HF_TOKEN}");
            if (!from) continue;
            if (!std::regex_match(*from, shell_name())) {
                r.diags().error(
                    r.pos(value["from_env"]),
                    path + ".from_env must be a variable name (got \"" + SectionReader::printable(*from) +
                        "\")",
                    "letters, digits and _, not starting with a digit, e.g. {from_env: HF_TOKEN}");
                continue;
            }
            v.from_env = *from;
        } else if (value.IsScalar()) {
            std::smatch m;
            const std::string& text = value.Scalar();
            if (std::regex_match(text, m, whole_ref)) {
                v.from_env = m[1];
            } else if (text.find("${") != std::string::npos) {
                r.diags().error(r.pos(value),
                                path + " mixes text and ${...} (got \"" + SectionReader::printable(text) +
                                    "\")",
                                "only a whole value ${NAME} is read from the controller's environment");
                continue;
            } else {
                v.value = text;
            }
        } else {
            r.diags().error(r.pos(value), path + " must be a value or {from_env: NAME} (got " +
                                              YamlReader::describe(value) + ")");
            continue;
        }
        out.env.push_back(std::move(v));
    }
}

} // namespace

std::string node_workdir(const Spec& spec) {
    return spec.services.nfs ? spec.services.nfs_mount + "/work" : "/var/lib/ddl/work/" + spec.name;
}

WorkdirRefusal refuse_workdir(const Spec& spec, const std::string& workdir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path w = fs::weakly_canonical(workdir, ec);
    if (ec) return {};
    const std::string hint = "point workdir at your project's folder, e.g. \"workdir: .\" beside the spec";
    static const std::set<std::string> k_system{
        "/",      "/bin",   "/boot", "/dev", "/etc",       "/home", "/lib",     "/lib32",
        "/lib64", "/media", "/mnt",  "/opt", "/proc",      "/root", "/run",     "/sbin",
        "/srv",   "/sys",   "/tmp",  "/usr", "/usr/local", "/var",  "/var/tmp", "/snap"};
    if (k_system.count(w.string()))
        return {"workdir " + workdir + " is " + w.string() +
                    ", a system folder: every sync would copy all of it",
                hint};
    if (const char* home = std::getenv("HOME"); home && *home) {
        const fs::path h = fs::weakly_canonical(home, ec);
        if (!ec && h == w)
            return {"workdir " + workdir + " is your home folder (" + w.string() +
                        "): every sync would copy all of it, keys and credentials included",
                    hint};
    }
    if (!spec.section.get() || spec.section.get()->nodes_are() != "namespaces") return {};
    const fs::path dest = fs::weakly_canonical(node_workdir(spec), ec);
    if (ec) return {};
    auto under = [](const fs::path& inner, const fs::path& outer) {
        const fs::path rel = inner.lexically_relative(outer);
        return !rel.empty() && *rel.begin() != "..";
    };
    if (under(dest, w))
        return {"workdir " + workdir + " holds " + dest.string() +
                    ", where sync copies it (the nodes share this machine's folders): each sync would copy "
                    "the workdir into itself",
                "use a folder that does not hold " + dest.string() + ", e.g. your project's folder"};
    if (under(w, dest))
        return {"workdir " + workdir + " lies in " + dest.string() +
                    ", where sync copies it (the nodes share this machine's folders): a sync would delete it",
                "keep the code outside " + dest.string()};
    return {};
}

namespace {
// Reports refuse_workdir's reason at the workdir key (specs read from a file, whose workdir is checked).
void check_workdir_place(SectionReader& r, const YAML::Node& doc, const Spec& spec) {
    const auto& w = spec.work;
    std::error_code ec;
    // A workdir that is not a folder was reported by read_workdir already.
    if (!r.checks_files() || w.workdir.empty() || !std::filesystem::is_directory(w.workdir_path, ec)) return;
    if (auto why = refuse_workdir(spec, w.workdir_path))
        r.diags().error(r.pos(doc["workdir"]), why.message, why.hint);
}
} // namespace

bool is_settable_env_name(const std::string& name) {
    static const std::set<std::string> k_launcher{
        "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"};
    return std::regex_match(name, shell_name()) && !starts_with(name, "DDL_") && !k_launcher.count(name);
}

void read_work(SectionReader& r, const YAML::Node& doc, const std::string& spec_file, Spec& spec) {
    WorkSpec& out = spec.work;
    read_workdir(r, doc, spec_file, out);
    check_workdir_place(r, doc, spec);
    read_setup(r, doc, out);
    read_env(r, doc, out);
    if (!out.setup.empty() && out.workdir.empty() && doc["setup"].IsDefined())
        r.diags().error(r.pos(doc["setup"]), "setup runs in the workdir, and this spec has none",
                        "add \"workdir: .\" (the spec's folder) or the folder your code is in");
}

} // namespace ddl
