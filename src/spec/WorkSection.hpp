#pragma once
// The spec's keys for the researcher's own code (docs/spec.md, "workdir, setup, env"): the folder synced to
// the nodes, the setup programs run on every node, the variables every rank and setup step gets.
#include "spec/SectionReader.hpp"
#include "spec/Spec.hpp"

#include <yaml-cpp/yaml.h>

namespace ddl {

// Reads the top-level keys workdir, setup and env of `doc` into `spec.work`; every problem is reported. A
// relative workdir is resolved against the folder of `spec_file` (when the reader checks files, it must be a
// folder there, and one refuse_workdir accepts). Call it after the services and the target's section are
// read: where sync copies the workdir depends on both.
void read_work(SectionReader& r, const YAML::Node& doc, const std::string& spec_file, Spec& spec);

// Where the workdir is on the nodes: <services.nfs.mount>/work with NFS, else /var/lib/ddl/work/<name>.
std::string node_workdir(const Spec& spec);

// Why the absolute folder `workdir` cannot be the spec's workdir, or "" when it can: a system folder (/,
// /etc, /usr, /root, /home, ... or the user's home folder itself), or, where the nodes share this machine's
// file system (the local target's namespaces), a folder that holds, is or lies in node_workdir(spec): each
// sync would copy the workdir into itself (or delete it). Links are resolved first.
struct WorkdirRefusal {
    std::string message, hint;
    explicit operator bool() const { return !message.empty(); }
};
WorkdirRefusal refuse_workdir(const Spec& spec, const std::string& workdir);

// Whether `name` is a variable name a spec's env may set: a shell name, not one of the launcher's own
// (DDL_*, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT).
bool is_settable_env_name(const std::string& name);

} // namespace ddl
