#include "spec/SpecLoader.hpp"

#include "core/Url.hpp"
#include "spec/DataSection.hpp"
#include "spec/GpuCompat.hpp"
#include "spec/ImageRef.hpp"
#include "spec/LifeSection.hpp"
#include "spec/SectionReader.hpp"
#include "spec/ServicesSection.hpp"
#include "spec/SmokeSection.hpp"
#include "spec/TargetKind.hpp"
#include "spec/WorkSection.hpp"
#include "util/Files.hpp"
#include "util/Net.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace ddl {

bool is_dns_label(const std::string& name, std::size_t max_len) {
    static const std::regex re("^[a-z]([-a-z0-9]*[a-z0-9])?$");
    return !name.empty() && name.size() <= max_len && std::regex_match(name, re);
}

Result<std::string> with_cluster_name(const std::string& text, const std::string& name) {
    if (!is_dns_label(name))
        return Error{
            "\"" + SectionReader::printable(name) +
            "\" is not a cluster name (1-40 lowercase letters, digits and '-', starting with a letter)"};
    static const std::regex line(R"(^name:[ \t]*[^\n]*$)", std::regex::multiline);
    std::smatch m;
    if (!std::regex_search(text, m, line)) return Error{"the spec has no top-level \"name:\" line to change"};
    return text.substr(0, static_cast<std::size_t>(m.position(0))) + "name: " + name +
           text.substr(static_cast<std::size_t>(m.position(0) + m.length(0)));
}

namespace {

const std::vector<std::string> k_common_keys{
    "apiVersion", "name",    "target", "nodes", "access",   "gpu",      "services", "runtime", "hostfile",
    "smoke",      "workdir", "setup",  "env",   "lifetime", "autostop", "cost",     "datasets"};

// Walks the document section by section; each function reads one map of the spec.
class Loader {
public:
    Loader(SectionReader& r, Spec& s, const TargetKinds& kinds) : m_r(r), m_s(s), m_kinds(kinds) {}

    void root(const YAML::Node& doc) {
        std::vector<std::string> names, top_keys = k_common_keys;
        for (const auto* k : m_kinds)
            names.push_back(k->name());
        // Every target's section name is a known key: one given for another target gets its own message.
        top_keys.insert(top_keys.begin() + 5, names.begin(), names.end());
        m_r.check_keys(doc, "", top_keys);
        if (auto v = m_r.child(doc, "apiVersion", "", true, "add \"apiVersion: ddl/v1\" as the first line");
            v.IsDefined()) {
            if (!v.IsScalar() || v.Scalar() != "ddl/v1")
                m_r.diags().error(m_r.pos(v),
                                  "apiVersion must be ddl/v1 (got " + YamlReader::describe(v) + ")",
                                  "this version of ddl reads ddl/v1 specs");
        }
        if (auto name = m_r.string(doc, "name", "", true,
                                   "add \"name: my-cluster\" (lowercase letters, digits, -)")) {
            if (!is_dns_label(*name))
                m_r.diags().error(
                    m_r.pos(doc["name"]),
                    "name must be DNS-safe (got \"" + SectionReader::printable(*name) + "\")",
                    "use 1-40 lowercase letters, digits and '-', starting with a letter, e.g. \"" +
                        suggest_name(*name) + "\"");
            else
                m_s.name = *name;
        }
        auto target = m_r.choice(doc, "target", "", names, true);
        if (target) {
            m_kind = *std::find_if(m_kinds.begin(), m_kinds.end(),
                                   [&](const TargetKind* k) { return k->name() == *target; });
            m_s.target = *target;
            m_s.section = SectionBox(m_kind->defaults());
        }

        target_sections(doc, names);
        if (auto n = doc["nodes"]; n.IsDefined()) {
            // A target sized by its own section takes only nodes.spares here.
            const bool spares_only = n.IsMap() && n.size() == 1 && n["spares"].IsDefined();
            if (m_kind && !m_kind->uses_node_groups() && !spares_only)
                m_r.diags().error(m_r.pos(doc["nodes"]), "nodes does not apply to target " + *target,
                                  m_kind->node_count_hint());
            else if (m_kind && !m_kind->uses_node_groups())
                spares(n);
            else
                nodes(n);
        } else if (m_kind && m_kind->uses_node_groups()) {
            m_r.diags().error(m_r.pos(doc), "missing required key \"nodes\"",
                              "target " + *target +
                                  " needs nodes.master and nodes.workers (count, flavor, gpus)");
        }
        if (auto a = doc["access"]; a.IsDefined()) access(a);
        if (auto g = doc["gpu"]; g.IsDefined()) gpu(g);
        if (auto sv = doc["services"]; sv.IsDefined()) read_services(m_r, sv, m_s, m_kind);
        if (auto rt = doc["runtime"]; rt.IsDefined()) runtime(rt);
        if (auto hf = doc["hostfile"]; hf.IsDefined() && m_r.expect_map(hf, "hostfile")) {
            m_r.check_keys(hf, "hostfile", {"format"});
            if (auto f = m_r.choice(hf, "format", "hostfile", {"openmpi", "horovod", "mpich"}))
                m_s.hostfile_format = *f == "openmpi"   ? HostfileFormat::openmpi
                                      : *f == "horovod" ? HostfileFormat::horovod
                                                        : HostfileFormat::mpich;
        }
        if (auto sm = doc["smoke"]; sm.IsDefined()) read_smoke(m_r, sm, m_s.smoke);
        read_work(m_r, doc, m_r.file(), m_s);
        read_life(m_r, doc, m_s.life, m_kind);
        read_datasets(m_r, doc, m_r.file(), m_s);
        check_driver_branch(m_r, doc, m_s);
        if (m_kind) m_kind->check(m_r, doc, m_s);
    }

private:
    static std::string suggest_name(const std::string& s) {
        std::string out;
        for (char c : to_lower(s)) {
            if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
                out += c;
            else if (!out.empty() && out.back() != '-')
                out += '-';
        }
        while (!out.empty() && (out.back() == '-'))
            out.pop_back();
        // One erase of the leading run: erasing char by char is quadratic on a long name of digits.
        out.erase(0, std::min(out.find_first_of("abcdefghijklmnopqrstuvwxyz"), out.size()));
        if (out.size() > 40) out.resize(40);
        while (!out.empty() && out.back() == '-')
            out.pop_back();
        return out.empty() ? "my-cluster" : out;
    }

    void target_sections(const YAML::Node& doc, const std::vector<std::string>& names) {
        for (const auto& section : names) {
            auto node = doc[section];
            bool is_target = m_kind && m_s.target == section;
            if (!node.IsDefined()) {
                if (is_target && m_kind->section_required())
                    m_r.diags().error(
                        m_r.pos(doc), "missing required key \"" + section + "\" for target " + section,
                        "add a \"" + section + ":\" section; see docs/spec.md or run `ddl init --target " +
                            section + "`");
                continue;
            }
            if (m_kind && !is_target) {
                m_r.diags().error(m_r.pos(node),
                                  "section \"" + section + "\" is given but target is " + m_s.target,
                                  "remove the section, or set \"target: " + section + "\"");
                continue;
            }
            if (!m_kind) continue;
            if (!m_r.expect_map(node, section)) continue;
            m_kind->parse(m_r, node, m_s);
        }
    }

    void group(const YAML::Node& n, const std::string& path, NodeGroup& g, bool is_master) {
        if (!m_r.expect_map(n, path)) return;
        std::vector<std::string> keys{"flavor", "gpus", "disk_gb"};
        if (!is_master) keys.insert(keys.begin(), "count");
        m_r.check_keys(n, path, keys);
        if (!is_master) {
            if (auto c = m_r.integer(n, "count", path, 0, 256, true)) g.count = static_cast<int>(*c);
        } else if (n["count"].IsDefined()) {
            // check_keys reported it; nothing more to do.
        }
        bool flavor_required = m_kind && m_kind->flavor_required();
        if (auto f = m_r.string(n, "flavor", path, flavor_required,
                                "name the cloud's flavor, e.g. \"flavor: g1.xlarge.4gpu\""))
            g.flavor = *f;
        if (auto gp = m_r.integer(n, "gpus", path, 0, 16)) g.gpus = static_cast<int>(*gp);
        if (auto d = m_r.integer(n, "disk_gb", path, 10, 65536)) g.disk_gb = static_cast<int>(*d);
    }

    void nodes(const YAML::Node& n) {
        if (!m_r.expect_map(n, "nodes")) return;
        m_r.check_keys(n, "nodes", {"master", "workers", "spares"});
        if (auto m = m_r.child(n, "master", "nodes", true); m.IsDefined())
            group(m, "nodes.master", m_s.master, true);
        if (auto w = n["workers"]; w.IsDefined()) group(w, "nodes.workers", m_s.workers, false);
        spares(n);
    }

    // nodes.spares: machines beyond the count, made like workers and given no ranks. In the normalized
    // spec the target's own count includes them (the section's, or nodes.workers.count).
    void spares(const YAML::Node& n) {
        auto v = m_r.integer(n, "spares", "nodes", 0, 64);
        if (!v || *v == 0) return;
        if (auto no = m_kind ? m_kind->refuse_spares() : std::nullopt) {
            m_r.diags().error(m_r.pos(n["spares"]), no->message, no->hint);
            return;
        }
        m_s.spares = static_cast<int>(*v);
        if (auto* section = m_s.section.get(); !section || !section->add_spare_nodes(m_s.spares)) {
            if (m_s.workers.count + m_s.spares > 256)
                m_r.diags().error(m_r.pos(n["spares"]), "nodes.workers.count plus nodes.spares exceed 256",
                                  "ask for fewer workers or spares");
            m_s.workers.count += m_s.spares;
        }
    }

    bool had_cidrs = false;

    void access(const YAML::Node& n) {
        if (!m_r.expect_map(n, "access")) return;
        m_r.check_keys(n, "access", {"user", "allowed_cidrs", "allow_any_source", "private_key"});
        if (auto u = m_r.string(n, "user", "access")) {
            static const std::regex re("^[a-z_][a-z0-9_-]{0,31}$");
            if (!std::regex_match(*u, re))
                m_r.diags().error(m_r.pos(n["user"]),
                                  "access.user must be a login name (got \"" + SectionReader::printable(*u) +
                                      "\")",
                                  "lowercase letters, digits, '_' and '-', at most 32 characters");
            else
                m_s.access.user = *u;
        }
        if (auto b = m_r.boolean(n, "allow_any_source", "access")) m_s.access.allow_any_source = *b;
        had_cidrs = n["allowed_cidrs"].IsDefined();
        if (auto list = m_r.string_list(n, "allowed_cidrs", "access")) {
            if (list->empty())
                m_r.diags().error(
                    m_r.pos(n["allowed_cidrs"]), "access.allowed_cidrs must not be empty",
                    "list the networks allowed to reach the cluster over SSH, e.g. [203.0.113.0/24]");
            std::set<std::string> seen;
            for (std::size_t i = 0; i < list->size(); ++i) {
                const auto& text = (*list)[i];
                auto node = n["allowed_cidrs"][i];
                std::string path = "access.allowed_cidrs[" + std::to_string(i) + "]";
                auto c = parse_cidr(text);
                if (!c) {
                    m_r.diags().error(
                        m_r.pos(node),
                        path + " is not a CIDR (got \"" + SectionReader::printable(text) + "\")",
                        "write an address and a prefix length, e.g. 203.0.113.0/24 or 2001:db8::/32");
                    continue;
                }
                if (!c->host_bits_zero()) {
                    Cidr fixed = *c;
                    for (int bit = fixed.prefix; bit < (fixed.v6 ? 128 : 32); ++bit)
                        fixed.addr[bit / 8] =
                            static_cast<std::uint8_t>(fixed.addr[bit / 8] & ~(0x80 >> (bit % 8)));
                    m_r.diags().error(m_r.pos(node), path + " has host bits set (got \"" + text + "\")",
                                      "did you mean \"" + fixed.text() + "\"?");
                    continue;
                }
                if (!seen.insert(c->text()).second) {
                    m_r.diags().error(m_r.pos(node), path + " repeats " + c->text(),
                                      "list each network once");
                    continue;
                }
                if (c->is_any() && !m_s.access.allow_any_source)
                    m_r.diags().error(
                        m_r.pos(node), path + " opens SSH to the whole internet (" + c->text() + ")",
                        "list your own networks, or set \"access.allow_any_source: true\" if you mean it");
                m_s.access.allowed_cidrs.push_back(c->text());
            }
        }
        m_r.key_file(n, "private_key", "access", m_s.access.private_key);
    }

    void gpu(const YAML::Node& n) { read_gpu(m_r, n, m_s.gpu); }

    void runtime(const YAML::Node& n) {
        if (!m_r.expect_map(n, "runtime")) return;
        m_r.check_keys(n, "runtime",
                       {"backend", "interface", "slots_per_node", "master_port", "image", "container_engine",
                        "shm_size", "mounts", "lease_warn_minutes"});
        auto& r = m_s.runtime;
        if (auto x = m_r.choice(n, "backend", "runtime", {"auto", "nccl", "tcp"}))
            r.backend = *x == "nccl" ? Backend::nccl : *x == "tcp" ? Backend::tcp : Backend::auto_select;
        if (auto x = m_r.string(n, "interface", "runtime")) {
            static const std::regex re("^[A-Za-z0-9_.:-]{1,15}$");
            if (*x == "auto")
                r.interface.clear();
            else if (!std::regex_match(*x, re))
                m_r.diags().error(m_r.pos(n["interface"]),
                                  "runtime.interface must be a network interface name (got \"" +
                                      SectionReader::printable(*x) + "\")",
                                  "e.g. eth0, ens3 or ib0; or \"auto\"");
            else
                r.interface = *x;
        }
        if (auto s = n["slots_per_node"]; s.IsDefined()) {
            if (!(s.IsScalar() && s.Scalar() == "auto")) {
                if (auto v = m_r.integer(n, "slots_per_node", "runtime", 1, 64))
                    r.slots_per_node = static_cast<int>(*v);
            }
        }
        if (auto v = m_r.integer(n, "master_port", "runtime", 1024, 65535))
            r.master_port = static_cast<int>(*v);
        if (auto v = m_r.integer(n, "lease_warn_minutes", "runtime", 0, 10080))
            r.lease_warn_minutes = static_cast<int>(*v);
        training_container(n);
    }

    // The training container's keys: an image, the engine that runs it, /dev/shm and extra mounts.
    void training_container(const YAML::Node& n) {
        auto& r = m_s.runtime;
        if (auto x = m_r.string(n, "image", "runtime")) {
            if (!parse_image_ref(*x))
                m_r.diags().error(m_r.pos(n["image"]),
                                  "runtime.image is not an image reference (got \"" +
                                      SectionReader::printable(*x) + "\")",
                                  "e.g. nvcr.io/nvidia/pytorch:24.05-py3 or localhost/ddl-train:1 (lowercase "
                                  "repository, optional :tag and @sha256:digest)");
            else if (auto no = m_kind ? m_kind->refuse_training_image(m_s) : std::nullopt)
                m_r.diags().error(m_r.pos(n["image"]), no->message, no->hint);
            else
                r.image = *x;
        }
        if (m_kind) r.container_engine = m_kind->default_container_engine();
        if (auto x = m_r.choice(n, "container_engine", "runtime", {"docker", "podman"})) {
            if (auto no = m_kind ? m_kind->refuse_container_engine(*x) : std::nullopt)
                m_r.diags().error(m_r.pos(n["container_engine"]), no->message, no->hint);
            else
                r.container_engine = *x;
        }
        if (auto x = m_r.string(n, "shm_size", "runtime")) {
            static const std::regex re("^[1-9][0-9]{0,9}[bkmgBKMG]?$");
            if (!std::regex_match(*x, re))
                m_r.diags().error(m_r.pos(n["shm_size"]),
                                  "runtime.shm_size must be a size like 8g or 512m (got \"" +
                                      SectionReader::printable(*x) + "\")",
                                  "units b, k, m, g; leave it out to share the node's /dev/shm (--ipc=host)");
            else
                r.shm_size = *x;
        }
        if (auto list = m_r.string_list(n, "mounts", "runtime")) {
            std::set<std::string> targets;
            for (std::size_t i = 0; i < list->size(); ++i) {
                const auto& text = (*list)[i];
                std::string why = bad_mount(text);
                std::string target = split(text, ':').size() >= 2 ? split(text, ':')[1] : "";
                if (why.empty() && !targets.insert(target).second)
                    why = "mounts " + target + " a second time";
                if (why.empty() &&
                    (target == "/opt/ddl" || (m_s.services.nfs && target == m_s.services.nfs_mount)))
                    why = "mounts over " + target + ", which ddl mounts itself";
                if (!why.empty())
                    m_r.diags().error(m_r.pos(n["mounts"][i]),
                                      "runtime.mounts[" + std::to_string(i) + "] " + why + " (got \"" +
                                          SectionReader::printable(text) + "\")",
                                      "write HOST_PATH:CONTAINER_PATH or HOST_PATH:CONTAINER_PATH:ro, both "
                                      "absolute, e.g. /data/imagenet:/data:ro");
                else
                    r.mounts.push_back(text);
            }
        }
        if (r.image.empty()) {
            for (const char* key : {"shm_size", "mounts"}) {
                if (n[key] && !n["image"])
                    m_r.diags().error(m_r.pos(n[key]),
                                      std::string("runtime.") + key + " applies only to a training container",
                                      "set runtime.image to the image the nodes should run, or remove it");
            }
        }
    }

    // Why a "host:container[:ro|rw]" bind mount is unusable; empty when it is fine.
    static std::string bad_mount(const std::string& text) {
        auto parts = split(text, ':');
        if (parts.size() < 2 || parts.size() > 3) return "is not HOST:CONTAINER[:ro]";
        if (parts.size() == 3 && parts[2] != "ro" && parts[2] != "rw")
            return "has options other than ro or rw";
        for (std::size_t i = 0; i < 2; ++i) {
            const auto& path = parts[i];
            if (path.empty() || path.front() != '/' || path.find("..") != std::string::npos ||
                path.find_first_of(" \t\n,\"'\\$") != std::string::npos)
                return std::string("has a ") + (i == 0 ? "host" : "container") +
                       " path that is not absolute (or has '..', spaces, commas or quotes)";
        }
        if (parts[1] == "/") return "mounts over the container's root";
        return {};
    }

    SectionReader& m_r;
    Spec& m_s;
    const TargetKinds& m_kinds;
    const TargetKind* m_kind = nullptr; // the spec's target, once known
};

// Line and column (1-based) of byte `offset` in `text`.
SourcePos position_of(const std::string& text, std::size_t offset, const std::string& file) {
    int line = 1, col = 1;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return {file, line, col};
}

} // namespace

SpecLoadResult SpecLoader::load_string(const std::string& text, const std::string& display_name,
                                       const TargetKinds& kinds, SpecOrigin origin) {
    SpecLoadResult out;
    auto& d = out.diagnostics;
    if (text.size() > k_max_bytes) {
        d.error({display_name, 0, 0},
                "file is " + std::to_string(text.size() / 1024) + " KiB; a cluster spec is at most " +
                    std::to_string(k_max_bytes / 1024) + " KiB",
                "is this the right file? a spec is a few dozen lines");
        return out;
    }
    if (trim(text).empty()) {
        d.error({display_name, 1, 1}, "file is empty", "run `ddl init` to write a starter cluster.yaml");
        return out;
    }
    if (auto bad = find_invalid_utf8(text)) {
        d.error(position_of(text, *bad, display_name), "file is not valid UTF-8",
                "save the file as UTF-8 text");
        return out;
    }
    if (text.find('\0') != std::string::npos) {
        d.error(position_of(text, text.find('\0'), display_name), "file contains a NUL byte",
                "is this a text file?");
        return out;
    }
    YAML::Node doc;
    try {
        doc = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
        YamlReader r(display_name, d);
        d.error(r.pos(e.mark), "YAML syntax error: " + e.msg,
                "check the indentation and quoting around this spot");
        return out;
    } catch (const YAML::Exception& e) {
        d.error({display_name, 1, 1}, std::string("cannot read YAML: ") + e.what());
        return out;
    }
    YamlReader r(display_name, d);
    if (!doc.IsMap()) {
        d.error(r.pos(doc), "a cluster spec must be a map of keys (got " + YamlReader::describe(doc) + ")",
                "start with \"apiVersion: ddl/v1\", \"name: ...\", \"target: ...\"; see `ddl init`");
        return out;
    }
    Spec spec;
    SectionReader sr(display_name, d, origin == SpecOrigin::file);
    Loader loader(sr, spec, kinds);
    try {
        loader.root(doc);
    } catch (const YAML::Exception& e) {
        d.error(r.pos(e.mark), std::string("cannot read YAML: ") + e.what());
    }
    const bool usable_as_stored = origin == SpecOrigin::stored && !spec.name.empty() && spec.section.get();
    if (!d.has_errors() || usable_as_stored) {
        spec.source_file = display_name;
        out.spec = std::move(spec);
    }
    return out;
}

SpecLoadResult SpecLoader::load_file(const std::string& path, const TargetKinds& kinds, SpecOrigin origin) {
    if (path == "-") {
        // The spec on stdin (`ddl validate -`), with the same size limit.
        std::string text(k_max_bytes + 1, '\0');
        std::cin.read(text.data(), static_cast<std::streamsize>(text.size()));
        text.resize(static_cast<std::size_t>(std::cin.gcount()));
        return load_string(text, "<stdin>", kinds, origin);
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        // Reading a FIFO or a terminal would wait for a writer that may never come.
        SpecLoadResult out;
        out.diagnostics.error({path, 0, 0},
                              S_ISDIR(st.st_mode) ? "is a folder, not a spec file" : "is not a regular file",
                              "give the path of a cluster.yaml (or - to read the spec from stdin)");
        return out;
    }
    auto text = read_file_limited(path, k_max_bytes);
    if (!text) {
        SpecLoadResult out;
        out.diagnostics.error({path, 0, 0}, text.error().message,
                              text.error().message.find("larger") != std::string::npos
                                  ? "is this the right file? a spec is a few dozen lines"
                                  : "check the path; `ddl init` writes a starter cluster.yaml");
        return out;
    }
    return load_string(*text, path, kinds, origin);
}

} // namespace ddl
