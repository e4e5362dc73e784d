#include "cli/CommandTable.hpp"

#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace ddl::cli {
namespace {

// name, help, needs, body. The order is the order of `ddl --help` and of the completion script.
constexpr CommandEntry k_commands[] = {
    {"completion", "Print a shell completion script: source <(ddl completion bash), or zsh", Needs::nothing,
     completion_command},
    {"help", "Show the commands, or one command's options: ddl help deploy", Needs::nothing, help_command},
    {"init", "Write a commented starter cluster.yaml", Needs::nothing, init_command},
    {"validate", "Check a spec; report every problem at once (exit 2 if any)", Needs::nothing,
     validate_command},
    {"render", "Write the target's inputs (deterministic) without deploying", Needs::nothing, render_command},
    {"plan", "Show what deploy would create, change, replace and delete; change nothing", Needs::nothing,
     plan_command},
    {"deploy", "Validate, render, provision, configure, probe, write the hostfile", Needs::nothing,
     deploy_command},
    {"destroy", "Tear down everything ddl created for a cluster", Needs::locked_cluster, destroy_command},
    {"stop", "Stop a cluster's machines keeping their disks (OpenStack, AWS); `ddl start` boots them again",
     Needs::locked_cluster, stop_command},
    {"start", "Start a stopped cluster's machines, wait for SSH, configure and probe them again",
     Needs::locked_cluster, start_command},
    {"renew", "Extend a cluster's lease (a Virtual Wall slice) to --hours N from now", Needs::locked_cluster,
     renew_command},
    {"list", "Every cluster in the state folder: target, nodes, state, age, lock", Needs::nothing,
     list_command},
    {"status", "Phases, nodes, addresses, GPUs and slots of a cluster", Needs::cluster, status_command},
    {"hostfile", "Print or write the hostfile from the probed nodes", Needs::probed_cluster,
     hostfile_command},
    {"exec", "Run a command on all (or some) nodes in parallel", Needs::cluster, exec_command},
    {"ssh", "Open a shell (or run a command) on one node", Needs::cluster, ssh_command},
    {"tunnel", "Forward a service on a node's localhost to this machine", Needs::cluster, tunnel_command},
    {"doctor", "What is wrong with the nodes, GPUs and network, where, and what to do (exit 1 if anything)",
     Needs::cluster, doctor_command},
    {"cordon", "Keep ranks off a node (hostfiles rewritten on every node); it keeps running",
     Needs::locked_cluster, cordon_command},
    {"uncordon", "Let a cordoned node take ranks again", Needs::locked_cluster, uncordon_command},
    {"run", "Start a program on every slot (bundled runtime launcher)", Needs::probed_cluster, run_command},
    {"sync", "Send the spec's workdir to the cluster (only what changed), then its setup where it changed",
     Needs::locked_cluster, sync_command},
    {"data", "The spec's datasets on the nodes: stage them, see where they stand", Needs::nothing, nullptr},
    {"data stage",
     "Copy the spec's datasets (or one) where jobs read them: only what changed, checked by hash",
     Needs::locked_cluster, data_stage_command},
    {"data status", "Each dataset's copy on each node: current, stale or not staged", Needs::probed_cluster,
     data_status_command},
    {"cp", "Copy files between this machine and a node: ddl cp CLUSTER:PATH LOCAL, or back", Needs::nothing,
     cp_command},
    {"jobs", "The cluster's jobs on its master: id, name, state, ranks, times, exit code", Needs::cluster,
     jobs_command},
    {"logs", "A job's output, every rank or one (--rank), followed with -f", Needs::cluster, logs_command},
    {"cancel", "Stop a job on every node (or take it out of the queue)", Needs::cluster, cancel_command},
    {"bench", "Allreduce, training and data-loading benchmarks", Needs::nothing, nullptr},
    {"bench allreduce", "nccl-tests style allreduce table with the link's limit", Needs::probed_cluster,
     bench_allreduce_command},
    {"bench train", "Training throughput and scaling over nodes x batch size", Needs::probed_cluster,
     bench_train_command},
    {"bench io",
     "Dataset read-and-decode throughput: shared folder or local disk, files or shards, loader workers",
     Needs::probed_cluster, bench_io_command},
    {"smoke-test", "Deploy, check, destroy (always), or check a deployed cluster; JUnit XML, notices",
     Needs::nothing, smoke_test_command},
    {"gc", "Destroy leaked clusters (by name prefix and age), as scheduled pipelines need", Needs::nothing,
     gc_command},
};

} // namespace

std::span<const CommandEntry> command_table() {
    return k_commands;
}

const CommandEntry& command_named(std::string_view name) {
    for (const auto& c : k_commands)
        if (name == c.name) return c;
    throw std::logic_error("no command \"" + std::string(name) + "\" in the command table");
}

void Invocation::say(const std::string& message) const {
    std::cerr << "ddl " << name << ": " << message << "\n";
}

int Invocation::fail(const std::string& message, int rc) const {
    say(message);
    // Under --output json a script reads stdout: the failure is there too, as one object.
    if (g.json) {
        static const std::string k_hint = "\nhint: ";
        const auto nl = message.find(k_hint);
        nlohmann::json j{{"error",
                          {{"command", name},
                           {"message", nl == std::string::npos ? message : message.substr(0, nl)},
                           {"exit_code", rc}}}};
        if (nl != std::string::npos) j["error"]["hint"] = message.substr(nl + k_hint.size());
        std::cout << j.dump(2) << "\n";
    }
    return rc;
}

} // namespace ddl::cli
