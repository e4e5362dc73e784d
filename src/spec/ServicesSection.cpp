#include "spec/ServicesSection.hpp"

#include "util/Strings.hpp"

#include <array>
#include <utility>

namespace ddl {

std::optional<std::string> system_folder_under(const std::string& path) {
    std::string p = path;
    while (p.size() > 1 && p.back() == '/')
        p.pop_back();
    // A mount on or under one of these hides what the node runs on: its configuration, programs, kernel
    // interfaces, root's and ddl's own files.
    static const std::array k_whole = {"/bin",     "/boot",    "/dev",       "/etc",       "/lib",
                                       "/lib32",   "/lib64",   "/libx32",    "/proc",      "/root",
                                       "/run",     "/sbin",    "/sys",       "/usr",       "/var/lib",
                                       "/var/log", "/var/run", "/var/cache", "/var/spool", "/opt/ddl"};
    for (const std::string w : k_whole)
        if (p == w || starts_with(p, w + "/")) return "the system folder " + w;
    // A mount exactly on one of these hides everything below it (every user's home and SSH keys); a folder
    // inside them is fine.
    static const std::array k_exact = {"/", "/home", "/opt", "/srv", "/mnt", "/media", "/tmp", "/var"};
    for (const std::string e : k_exact)
        if (p == e) return "the system folder " + std::string(e);
    // Any .ssh folder: the mount would hide (or, shared, replace) a user's authorized keys.
    if (ends_with(p, "/.ssh") || p.find("/.ssh/") != std::string::npos) return std::string("a .ssh folder");
    return std::nullopt;
}

namespace {

// A service that is on, where the target's nodes cannot run it, is refused at its `enabled` key.
void refuse_where_unavailable(SectionReader& r, const YAML::Node& n, const Spec& spec, const TargetKind* kind,
                              const std::string& service) {
    if (!kind) return;
    if (auto no = kind->refuse_service(spec, service)) {
        if (no->warning_only)
            r.diags().warning(r.pos(n["enabled"]), no->message, no->hint);
        else
            r.diags().error(r.pos(n["enabled"]), no->message, no->hint);
    }
}

} // namespace

void read_services(SectionReader& r, const YAML::Node& n, Spec& spec, const TargetKind* kind) {
    if (!r.expect_map(n, "services")) return;
    r.check_keys(n, "services", {"nfs", "jupyter", "monitoring"});
    auto& s = spec.services;
    if (auto x = n["nfs"]; x.IsDefined() && r.expect_map(x, "services.nfs")) {
        r.check_keys(x, "services.nfs", {"enabled", "export", "mount", "transport"});
        if (auto b = r.boolean(x, "enabled", "services.nfs")) s.nfs = *b;
        if (auto t = r.choice(x, "transport", "services.nfs", {"auto", "nfs", "sshfs"})) s.nfs_transport = *t;
        r.abs_path(x, "export", "services.nfs", s.nfs_export);
        r.abs_path(x, "mount", "services.nfs", s.nfs_mount);
        // Checked on the value read (kept even when refused: a stored spec still reads as it was deployed).
        if (auto folder = x["mount"].IsDefined() ? system_folder_under(s.nfs_mount) : std::nullopt)
            r.diags().error(r.pos(x["mount"]),
                            "services.nfs.mount " + s.nfs_mount + " is over " + *folder +
                                ": the shared folder mounted there would hide what the nodes need",
                            "use a folder of its own, e.g. /shared (the default)");
    }
    if (auto x = n["jupyter"]; x.IsDefined() && r.expect_map(x, "services.jupyter")) {
        r.check_keys(x, "services.jupyter", {"enabled", "port", "install"});
        if (auto b = r.boolean(x, "enabled", "services.jupyter")) s.jupyter = *b;
        if (auto i = r.choice(x, "install", "services.jupyter", {"auto", "pip", "apt"}))
            s.jupyter_install = *i;
        if (auto v = r.integer(x, "port", "services.jupyter", 1024, 65535))
            s.jupyter_port = static_cast<int>(*v);
        if (s.jupyter) refuse_where_unavailable(r, x, spec, kind, "jupyter");
    }
    if (auto x = n["monitoring"]; x.IsDefined() && r.expect_map(x, "services.monitoring")) {
        r.check_keys(x, "services.monitoring", {"enabled", "grafana"});
        if (auto b = r.boolean(x, "enabled", "services.monitoring")) s.monitoring = *b;
        if (auto b = r.boolean(x, "grafana", "services.monitoring")) s.grafana = *b;
        if (s.monitoring) refuse_where_unavailable(r, x, spec, kind, "monitoring");
    }
}

} // namespace ddl
