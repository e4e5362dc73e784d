#pragma once
// The cluster spec (cluster.yaml, apiVersion ddl/v1) as a typed model with every default filled in.
// docs/spec.md documents each field; SpecLoader is the only way to build one from a file.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ddl {

enum class Target { openstack, virtualwall, gpulab, ssh, slurm, local };
enum class HostfileFormat { openmpi, horovod, mpich };
enum class Backend { auto_select, nccl, tcp };

const std::vector<std::string>& target_names();
std::string to_string(Target t);
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

struct BackendSpec {
    std::string type = "local";                // local | http | s3
    std::string address;                       // http
    std::string bucket, key, region, endpoint; // s3
};

struct OpenstackSpec {
    std::string cloud;
    std::string image = "Ubuntu 22.04";
    std::string external_network;
    std::string network; // existing network name; empty: create one
    std::string network_cidr = "192.168.42.0/24";
    int boot_volume_gb = 100;
    bool anti_affinity = false;
    std::vector<std::string> dns_nameservers;
    BackendSpec state_backend;
    std::string terraform; // "terraform", "tofu" or an absolute path; empty: terraform, else tofu, from PATH
};

struct VirtualwallSpec {
    std::string testbed = "wall2";
    std::string project;
    std::string hardware_type = "gpunode";
    std::string disk_image;
    std::uint64_t link_capacity_bps = 10'000'000'000ULL;
    std::string jfed_cli; // path to the experimenter CLI jar/wrapper; empty: use --manifest
    int expiry_hours = 24;
    std::string slice; // GENI slice name; empty: the cluster name (which must then fit the slice rules)
    std::string connect_via = "ipv6"; // ipv6 | hostname | ipv4: which manifest address ddl uses for SSH

    // The slice ddl creates/deletes: `slice`, or the cluster name.
    std::string slice_name(const std::string& cluster) const { return slice.empty() ? cluster : slice; }
};

struct GpulabSpec {
    std::string project;
    std::string cluster_id;
    std::string docker_image;
    std::string layout = "jobs-per-gpu"; // one-job | jobs-per-gpu
    std::string gpu_model;
    std::string min_cuda_version;
    int cpus_per_gpu = 4;
    int memory_gb_per_gpu = 16;
    std::string api_url = "https://gpulab.ilabt.imec.be/api/gpulab/v3.0";
    std::string cert;      // PEM with client certificate + key; GPULAB_CERT overrides; never logged
    int wait_minutes = 30; // how long jobs may stay QUEUED/STARTING before deploy gives up
    int ssh_port = 22;     // port the job's sshd listens on inside the container
    std::string max_duration = "1 day"; // scheduling.maxDuration
};

struct SshHost {
    std::string name;
    std::string address;
    int port = 22;
    std::string user;            // empty: access.user
    std::string key;             // empty: cluster key
    std::string jump;            // another host's name or user@host:port
    std::string private_address; // how the other hosts reach it; empty: address
    int gpus = -1;               // -1: probe
};

struct SshTargetSpec {
    std::vector<SshHost> hosts;
};

struct SlurmSpec {
    std::string partition;
    int nodes = 1;
    int gpus_per_node = 0;
    int tasks_per_node = 0; // 0: gpus_per_node or 1
    std::string time = "01:00:00";
    std::string account;
    // Where the compute nodes find the bundled runtime (bin/, lib/) on a shared file system; empty:
    // `ddl deploy` stages it into the cluster's state folder, which sbatch jobs see as their submit dir.
    std::string runtime_dir;
    int start_timeout_minutes = 30; // how long deploy waits for the job to start running

    // Tasks (ranks) per node: tasks_per_node, else the GPUs per node, else 1.
    int tasks() const {
        return tasks_per_node > 0 ? tasks_per_node : (gpus_per_node > 0 ? gpus_per_node : 1);
    }
};

struct LocalSpec {
    int nodes = 2;
    std::string subnet;                  // empty: derived from the cluster name
    std::uint64_t bandwidth_bps = 0;     // 0: unshaped
    std::string nodes_as = "namespaces"; // namespaces | containers
    // Cloud-like layout: only the master on the machine's bridge; workers on a private bridge that only
    // the master reaches, so everything goes through it as a bastion (ProxyJump).
    bool bastion = false;
    // Container nodes: their image (empty: ddl builds a Debian 12 one with debootstrap), the Debian
    // mirror for that build, and an apt proxy for the nodes (empty: ddl runs apt-cacher-ng on the bridge).
    std::string image;
    std::string mirror = "http://deb.debian.org/debian";
    std::string apt_proxy;
};

struct GpuSpec {
    bool driver = true;
    std::string driver_branch = "535";
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
    // The training container (#11): empty image means no container; the engine runs it on every node.
    std::string image;
    std::string container_engine = "docker"; // docker | podman (the local target: podman)
    std::string shm_size;                    // empty: --ipc=host (the machine's /dev/shm)
    std::vector<std::string> mounts;         // extra "host:container[:ro]" bind mounts, absolute paths
};

struct Spec {
    std::string api_version = "ddl/v1";
    std::string name;
    Target target = Target::local;
    std::string source_file; // where it was loaded from (not part of rendered output)
    NodeGroup master;
    NodeGroup workers{.count = 0};
    AccessSpec access;
    OpenstackSpec openstack;
    VirtualwallSpec virtualwall;
    GpulabSpec gpulab;
    SshTargetSpec ssh;
    SlurmSpec slurm;
    LocalSpec local;
    GpuSpec gpu;
    ServicesSpec services;
    RuntimeSpec runtime;
    HostfileFormat hostfile_format = HostfileFormat::openmpi;

    // Total nodes the cluster will have, whatever the target.
    int node_count() const;
    // GPUs the node groups ask for (master + workers), for targets sized by GPUs (gpulab).
    int total_gpus() const { return master.count * master.gpus + workers.count * workers.gpus; }
    // The training container on `node` (unique per node, also when several share one machine).
    std::string training_container(const std::string& node) const { return "ddl-train-" + name + "-" + node; }
    // The container engine's argv prefix on the nodes (podman runs only with runc on the local target).
    std::vector<std::string> container_engine_argv() const;
    // The normalized spec with defaults, stable key order (used by render and state).
    nlohmann::json to_json() const;
};

} // namespace ddl
