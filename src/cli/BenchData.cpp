// The benchmarks' dataset on the nodes: its two places, making it once, copying it, dropping caches.
#include "cli/BenchData.hpp"

#include "cli/Datasets.hpp"
#include "cli/OpenCluster.hpp"
#include "remote/RemoteExecutor.hpp"
#include "util/Strings.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <mutex>

namespace ddl::cli {
namespace {

constexpr const char* k_manifest = "ddl-data.json";

// The generator's command line writing into a temporary folder beside `dir`, renamed into place.
std::string generate_into(const BenchDataset& d, const std::string& dir, const std::string& python) {
    const std::string q = shell_quote(dir);
    return "mkdir -p \"$(dirname " + q + ")\" && t=$(mktemp -d " + q +
           ".part.XXXXXX) && PYTHONPATH=/opt/ddl/python" + "${PYTHONPATH:+:$PYTHONPATH} " +
           shell_quote(python) + " -m ddl_data generate --out \"$t\" --images " + std::to_string(d.images) +
           " --classes " + std::to_string(d.classes) + " --seed " + std::to_string(d.seed) + " --shards " +
           std::to_string(d.shards) + " --format both && chmod 755 \"$t\"" + " && { rm -rf " + q +
           "; mv -T \"$t\" " + q + " 2>/dev/null || rm -rf \"$t\"; }";
}

// Unless `dir` holds a whole dataset: `make`; then it must.
std::string unless_present(const std::string& dir, const std::string& make) {
    const std::string manifest = shell_quote(dir + "/" + k_manifest);
    return "if test -f " + manifest + "; then echo present; else " + make + "; test -f " + manifest +
           " && echo made; fi";
}

std::chrono::seconds generate_timeout(const BenchDataset& d) {
    return std::chrono::seconds(120 + d.images / 10); // ~10 ms an image on one core, 10x to spare
}

Result<std::string> run_on(Context& ctx, const NodeState& n, const std::string& cmd,
                           std::chrono::seconds timeout) {
    auto r = ctx.remote.exec(ctx.endpoint(n), cmd, timeout);
    if (!r) return Error{n.name + ": " + r.error().message};
    if (!r->ok()) return Error{n.name + ": " + trim(r->err.empty() ? r->out : r->err)};
    return trim(r->out);
}

} // namespace

std::string BenchDataset::name() const {
    return "synth-" + std::to_string(images) + "x" + std::to_string(classes) + "-s" + std::to_string(seed);
}

std::string bench_data_path(const Spec& spec, const std::string& source, const std::string& name) {
    DatasetSpec d;
    d.name = name;
    d.to_shared = source == "shared";
    return dataset_path(spec, d);
}

Status check_data_source(const Spec& spec, const std::string& source) {
    if (source == "shared" && !spec.services.nfs)
        return refusal_error(
            "--source shared reads the shared folder, which this cluster has not (services.nfs.enabled: "
            "false); use --source local or enable it and deploy again");
    return {};
}

Status ensure_bench_dataset(Context& ctx, const BenchDataset& d, const std::string& source,
                            const std::string& python) {
    const std::string shared = bench_data_path(ctx.spec, "shared", d.name());
    const std::string local = bench_data_path(ctx.spec, "local", d.name());
    if (ctx.spec.services.nfs) {
        auto r = run_on(ctx, *master_of(ctx), unless_present(shared, generate_into(d, shared, python)),
                        generate_timeout(d));
        if (!r) return Error{"making the dataset in the shared folder: " + r.error().message};
        std::cerr << "dataset " << d.name() << ": " << (ends_with(*r, "made") ? "generated" : "present")
                  << " on the master (" << shared << ")\n";
    }
    if (source != "local") return {};
    // A plain copy from the shared folder (or the generator where there is none), every node at once.
    const std::string make = ctx.spec.services.nfs
                                 ? "mkdir -p " + std::string(k_local_data_root) + " && t=$(mktemp -d " +
                                       shell_quote(local) + ".part.XXXXXX) && cp -a " + shell_quote(shared) +
                                       "/. \"$t\"/ && chmod 755 \"$t\" && { rm -rf " + shell_quote(local) +
                                       "; mv -T \"$t\" " + shell_quote(local) +
                                       " 2>/dev/null || rm -rf \"$t\"; }"
                                 : generate_into(d, local, python);
    const auto& nodes = ctx.state.nodes;
    std::vector<Status> results(nodes.size());
    std::vector<std::string> said(nodes.size());
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        auto r = run_on(ctx, nodes[i], unless_present(local, make), generate_timeout(d));
        if (!r)
            results[i] = r.error();
        else
            said[i] = *r;
    });
    int made = 0;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (!results[i])
            return Error{"copying the dataset to the nodes' disks: " + results[i].error().message};
        made += ends_with(said[i], "made") ? 1 : 0;
    }
    std::cerr << "dataset " << d.name() << ": "
              << (ctx.spec.services.nfs ? "copied from the shared folder" : "generated") << " on " << made
              << " of " << nodes.size() << " node(s) at " << local << "\n";
    return {};
}

std::string drop_page_caches(Context& ctx) {
    const std::string cmd =
        "if [ \"$(id -u)\" = 0 ]; then sync && echo 3 > /proc/sys/vm/drop_caches; else sudo -n "
        "sh -c 'sync && echo 3 > /proc/sys/vm/drop_caches'; fi";
    const auto& nodes = ctx.state.nodes;
    std::vector<int> dropped(nodes.size(), 0);
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        dropped[i] = run_on(ctx, nodes[i], cmd, std::chrono::seconds(120)) ? 1 : 0;
    });
    std::vector<std::string> missed;
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (!dropped[i]) missed.push_back(nodes[i].name);
    if (missed.empty())
        return "page cache dropped on every node (the master, which serves the shared folder, included) "
               "before "
               "each run";
    return "page cache NOT dropped on " + join(missed, ", ") +
           " (needs root or sudo -n): their figures may include reads from memory";
}

} // namespace ddl::cli
