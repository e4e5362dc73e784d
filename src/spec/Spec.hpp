#pragma once
// The cluster spec (cluster.yaml, apiVersion ddl/v1) as a typed model with every default filled in.
// docs/spec.md documents each field; SpecLoader is the only way to build one from a file.
#include "spec/TargetSection.hpp"

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddl {

enum class HostfileFormat { openmpi, horovod, mpich };
enum class Backend { auto_select, nccl, tcp };

std::string to_string(HostfileFormat f);
std::string to_string(Backend b);

struct NodeGroup {
    int count = 1;
    std::string flavor; // openstack flavor / virtualwall hardware type
    int gpus = 0;       // GPUs per node
    int disk_gb = 50;
};

struct AccessSpec {
    std::string user = "ubuntu";
    std::vector<std::string> allowed_cidrs;
    bool allow_any_source = false;
    std::string private_key; // path; empty: a per-cluster key is generated
};

struct GpuSpec {
    bool driver = true;
    std::string driver_branch = "580";   // the oldest branch that runs CUDA 13 (docs/gpus.md)
    std::string kernel_modules = "auto"; // auto | open | proprietary (auto: by the GPUs on each node)
    bool container_toolkit = true;
    bool allow_reboot = true;
};

struct ServicesSpec {
    bool nfs = true;
    std::string nfs_export = "/srv/ddl";
    std::string nfs_mount = "/shared";
    std::string nfs_transport = "auto"; // auto | nfs | sshfs (auto: sshfs where the kernel has no nfsd)
    bool jupyter = false;
    int jupyter_port = 8888;
    std::string jupyter_install = "auto"; // auto | pip | apt (auto: apt on container nodes, else pip)
    bool monitoring = false;
    bool grafana = true; // never on local container nodes (its repository is not reachable from them)
};

struct RuntimeSpec {
    Backend backend = Backend::auto_select;
    std::string interface;  // empty: auto (not lo, not docker*)
    int slots_per_node = 0; // 0: auto (GPUs, or 1 on CPU-only nodes)
    int master_port = 29500;
    // The training container: empty image means no container; the engine runs it on every node.
    std::string image;
    std::string container_engine = "docker"; // docker | podman (the local target: podman)
    std::string shm_size;                    // empty: --ipc=host (the machine's /dev/shm)
    std::vector<std::string> mounts;         // extra "host:container[:ro]" bind mounts, absolute paths
    // Commands that start work warn when the target's lease on the nodes ends sooner than this; 0: never.
    int lease_warn_minutes = 30;
};

// A check of the user's own that `ddl smoke-test` runs after its built-in ones (spec key smoke.checks).
struct SmokeCheck {
    std::string name;       // its JUnit testcase, "NAME (node)"
    std::string run;        // a shell command run on each node it is `on`
    std::string on = "all"; // master | workers | all
    int timeout_s = 60;
    int expect_exit = 0; // the exit status that passes
};

// The smoke test's short training check: the bundled mlp_trainer's loss must fall by min_loss_drop (a
// fraction of the first step's loss) within `steps` data-parallel steps on every slot.
struct SmokeTraining {
    bool enabled = true;
    int steps = 40;
    double min_loss_drop = 0.3;
    bool operator==(const SmokeTraining&) const = default;
};

struct SmokeSpec {
    std::vector<SmokeCheck> checks;
    SmokeTraining training;
};

// A variable every rank and setup step gets (spec key env): a value written in the spec, or the name of a
// variable of the controller's environment read when a command needs it (`${NAME}`, `{from_env: NAME}`),
// so that a secret is never in the spec, the state or the rendered files.
struct EnvVar {
    std::string name;
    std::string value;    // when from_env is empty
    std::string from_env; // the controller's variable to read; empty: `value`
    bool operator==(const EnvVar&) const = default;
};

// The researcher's own code and its preparation (spec keys workdir, setup, env; docs/spec.md).
struct WorkSpec {
    std::string workdir;            // as written: a folder, relative to the spec file's folder or absolute
    std::string workdir_path;       // absolute on this machine when the spec came from a file; else = workdir
    std::vector<std::string> setup; // shell programs run on every node, in order
    std::vector<int> setup_lines;   // the spec line of each program (for a failure's message)
    std::vector<EnvVar> env;
};

// What the cluster's hours cost (spec key cost): a price per node-hour and per GPU-hour, added up; a node
// of a flavor in per_flavor, a GPU whose model is in per_gpu_model, has that price instead.
struct CostSpec {
    double per_node_hour = 0;
    double per_gpu_hour = 0;
    std::map<std::string, double> per_flavor;    // by its node group's flavor (machine size, instance type)
    std::map<std::string, double> per_gpu_model; // by a part of the GPU's name ("A100"), case-insensitive
    std::string currency;                        // as written ("EUR"); empty: no price table
    // A node-hour of a node of `flavor` (empty: none named).
    double node_price(const std::string& flavor) const;
    // A GPU-hour of a GPU named `gpu_name` (as probed; empty: not known): the longest key it contains.
    double gpu_price(const std::string& gpu_name) const;
    bool set() const { return !currency.empty(); }
    // What `nodes` nodes with `gpus` GPUs in all cost per hour.
    double hourly(int nodes, int gpus) const { return nodes * per_node_hour + gpus * per_gpu_hour; }
};

// What happens to a cluster idle for a while (spec key autostop): the master's idle clock
// (/opt/ddl/bin/ddl-idle) records since when it is idle; `ddl gc --expired` acts once it has been idle for
// idle_minutes.
struct AutostopSpec {
    int idle_minutes = 0;           // 0: no autostop
    std::string action = "destroy"; // "destroy", or "stop" where the target can stop and start keeping disks
    // Opt-in (openstack, aws): the master holds a credential scoped to the cluster's own servers, with which
    // its idle clock ends the cluster itself (docs/security.md, "A credential on the master").
    bool node_credential = false;
    bool set() const { return idle_minutes > 0; }
};

// How long the cluster may live, when it ends for idleness and what it costs (spec keys lifetime,
// autostop, cost; docs/spec.md).
struct LifeSpec {
    long long lifetime_s = 0; // 0: no lifetime (the cluster stays until destroyed)
    AutostopSpec autostop;
    CostSpec cost;
};

// A dataset the cluster's jobs read (spec key datasets; docs/spec.md): where it comes from and where
// `ddl data stage` puts it. Jobs find it in DDL_DATA_<NAME>.
struct DatasetSpec {
    enum class Source { folder, shared, url };
    std::string name;   // [a-z][a-z0-9_]*
    std::string source; // as written
    Source kind = Source::folder;
    // folder: absolute on this machine when the spec came from a file (else as written); shared: the path
    // inside the cluster's shared folder (no leading /); url: the URL.
    std::string location;
    bool to_shared = false; // to: shared (the shared folder) or local (every node's disk)
    std::string format;     // "", files or shards: the layout the staged copy has
    std::string convert;    // "" or shards: one file per image packed into shards before staging
    bool operator==(const DatasetSpec&) const = default;
};

struct Spec {
    std::string api_version = "ddl/v1";
    std::string name;
    std::string target;      // the target's name as the registry (src/targets/Registry.cpp) lists it
    std::string source_file; // where it was loaded from (not part of rendered output)
    NodeGroup master;
    NodeGroup workers{.count = 0};
    // nodes.spares: nodes made beyond the count and given no ranks until one takes a failed node's place;
    // already counted in the target's own count (local.nodes, nodes.workers.count).
    int spares = 0;
    AccessSpec access;
    SectionBox section; // the target's own section; its folder under src/targets/ defines the type
    GpuSpec gpu;
    ServicesSpec services;
    RuntimeSpec runtime;
    HostfileFormat hostfile_format = HostfileFormat::openmpi;
    SmokeSpec smoke;
    WorkSpec work;                     // not in to_json: a change of code, setup or env redeploys nothing
    LifeSpec life;                     // not in to_json: the lifetime and prices change nothing on the nodes
    std::vector<DatasetSpec> datasets; // not in to_json: staged by `ddl data stage`, not by deploy

    // The target's section as its own type T; a logic error when the spec is of another target.
    template <class T> const T& target_section() const {
        if (const auto* p = dynamic_cast<const T*>(section.get())) return *p;
        throw std::logic_error("the spec of cluster " + name + " (target " + target +
                               ") has no section of the type asked for");
    }
    template <class T> T& target_section() {
        return const_cast<T&>(static_cast<const Spec*>(this)->target_section<T>());
    }
    // The link rate between nodes the spec sets (local shaping, testbed link capacity); 0: not known.
    std::uint64_t link_rate_bps() const { return section.get() ? section.get()->link_rate_bps() : 0; }

    // Total nodes the cluster will have, whatever the target.
    int node_count() const;
    // GPUs the node groups ask for (master + workers), for targets sized by GPUs.
    int total_gpus() const { return master.count * master.gpus + workers.count * workers.gpus; }
    // The training container on `node` (unique per node, also when several share one machine).
    std::string training_container(const std::string& node) const { return "ddl-train-" + name + "-" + node; }
    // The container engine's argv prefix on the nodes (podman runs only with runc on the local target).
    std::vector<std::string> container_engine_argv() const;
    // The normalized spec with defaults, stable key order (used by render and state).
    nlohmann::json to_json() const;
};

} // namespace ddl
