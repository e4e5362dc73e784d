#pragma once
// The benchmarks' image dataset (python3 -m ddl_data, bundled with the runtime): where it lies on the
// nodes, made once on the master into the shared folder, copied onto every node's local disk, and the
// page cache dropped between runs.
#include "provision/Context.hpp"
#include "util/Result.hpp"

#include <string>
#include <vector>

namespace ddl::cli {

struct BenchDataset {
    int images = 2000;
    int classes = 10;
    int seed = 0;
    int shards = 32;
    // "synth-<images>x<classes>-s<seed>": the parameters are in the name, so other sizes never clash.
    std::string name() const;
};

// Where a dataset named `name` lies on the nodes: `shared` is <services.nfs.mount>/ddl-data/<name>,
// `local` is /var/lib/ddl/data/<name> on every node (the two places `ddl data stage` copies to).
std::string bench_data_path(const Spec& spec, const std::string& source, const std::string& name);

// A refusal (exit 2) for a source this cluster lacks: `shared` without services.nfs; else none.
Status check_data_source(const Spec& spec, const std::string& source);

// Makes the dataset where `source` says unless it is there (its manifest, written last, marks it whole):
// `shared` generated once on the master; `local` copied from the shared folder to every node in parallel
// (each into a temporary folder renamed into place), or generated on every node without a shared folder.
// Lines on stderr say what was done.
Status ensure_bench_dataset(Context& ctx, const BenchDataset& d, const std::string& source,
                            const std::string& python);

// Drops the page cache (sync; echo 3 > /proc/sys/vm/drop_caches, as root or with sudo -n) on every node of
// the cluster, the master (the NFS server) included, so a read comes from the disk or the network and
// not from memory. Returns what was done, for the report.
std::string drop_page_caches(Context& ctx);

} // namespace ddl::cli
