#include "provision/Probe.hpp"

#include "util/KillPoint.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace ddl {
namespace {

// "12.9" from the node's /etc/ddl/cuda.json ({"major": 12, "minor": 9, ...}); empty when absent or
// unreadable.
std::string cuda_of(const std::string& text) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("major") || !j["major"].is_number_integer())
        return "";
    const bool has_minor = j.contains("minor") && j["minor"].is_number_integer();
    return std::to_string(j["major"].get<int>()) +
           (has_minor ? "." + std::to_string(j["minor"].get<int>()) : std::string());
}

} // namespace

std::string probe_command() {
    // Markers keep each answer on its own line whatever the node's tools print.
    return "echo \"@gpus\"; (command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null) || true; "
           "echo \"@cpus $(nproc)\"; "
           "echo \"@mem $(awk '/^MemTotal:/ {print int($2/1024)}' /proc/meminfo)\"; "
           "echo \"@os $( (. /etc/os-release && echo \"$PRETTY_NAME\") 2>/dev/null || uname -s)\"; "
           "echo \"@kernel $(uname -r)\"; echo \"@hostname $(hostname)\"; "
           // What the runtime role chose on a GPU node (roles/runtime/tasks/cuda.yml), on one line.
           "echo \"@cuda $( (tr -d '\\n' </etc/ddl/cuda.json) 2>/dev/null)\"; echo \"@end\"";
}

Status parse_probe_output(const std::string& out, NodeState& node) {
    bool in_gpus = false, ended = false;
    node.gpu_names.clear();
    node.cuda.clear();
    for (const auto& raw : split_lines(out)) {
        std::string line = trim(raw);
        if (line == "@gpus") {
            in_gpus = true;
            continue;
        }
        if (starts_with(line, "@")) in_gpus = false;
        if (in_gpus) {
            // "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)"
            if (starts_with(line, "GPU ")) {
                auto colon = line.find(": ");
                auto uuid = line.find(" (UUID");
                node.gpu_names.push_back(colon == std::string::npos
                                             ? line
                                             : line.substr(colon + 2, uuid == std::string::npos
                                                                          ? std::string::npos
                                                                          : uuid - colon - 2));
            }
        } else if (starts_with(line, "@cpus ")) {
            node.cpus = static_cast<int>(parse_int(line.substr(6)).value_or(0));
        } else if (starts_with(line, "@mem ")) {
            node.memory_mb = parse_int(line.substr(5)).value_or(0);
        } else if (starts_with(line, "@os ")) {
            node.os = line.substr(4);
        } else if (starts_with(line, "@kernel ")) {
            node.kernel = line.substr(8);
        } else if (starts_with(line, "@cuda ")) {
            node.cuda = cuda_of(line.substr(6));
        } else if (starts_with(line, "@hostname ")) {
            node.hostname = line.substr(10);
        } else if (line == "@end") {
            ended = true;
        }
    }
    if (!ended || node.cpus <= 0) return Error{"the probe's output was incomplete"};
    node.gpus = static_cast<int>(node.gpu_names.size());
    node.probed = true;
    return {};
}

int slots_for(const Spec& spec, const NodeState& node, bool cluster_has_gpus) {
    if (spec.runtime.slots_per_node > 0) return spec.runtime.slots_per_node;
    if (node.gpus > 0) return node.gpus;
    // A GPU-less node beside GPU nodes (the usual master) would become rank 0 on the CPU while the other
    // ranks use NCCL: it hosts services and the shared folder, and no rank.
    return cluster_has_gpus ? 0 : 1;
}

Status probe_nodes(Context& ctx) {
    auto& nodes = ctx.state.nodes;
    std::vector<Status> results(nodes.size());
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        auto r = ctx.remote.exec(ctx.endpoint(nodes[i]), probe_command(), std::chrono::seconds(60));
        if (!r) {
            results[i] = r.error();
        } else if (!r->ok()) {
            results[i] = Error{"probe exited " + std::to_string(r->exit_status) + ": " + trim(r->err)};
        } else {
            results[i] = parse_probe_output(r->out, nodes[i]);
        }
        if (results[i]) {
            ctx.progress.node(nodes[i].name, std::to_string(nodes[i].gpus) + " GPU(s), " +
                                                 std::to_string(nodes[i].cpus) + " CPU(s), " + nodes[i].os);
        }
    });
    std::vector<std::string> failed;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (!results[i]) failed.push_back(nodes[i].name + ": " + results[i].error().message);
    }
    if (!failed.empty()) return Error{"probe failed on " + join(failed, "; ")};
    const bool cluster_has_gpus =
        std::any_of(nodes.begin(), nodes.end(), [](const NodeState& n) { return n.gpus > 0; });
    for (auto& n : nodes)
        n.slots = slots_for(ctx.spec, n, cluster_has_gpus);
    kill_point("probe:probed");
    return {};
}

} // namespace ddl
