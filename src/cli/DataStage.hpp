#pragma once
// `ddl data stage`: a dataset copied to where the spec puts it (every node's disk, or the shared folder
// once), only what changed (rsync), every node at once, resumable (a killed copy keeps what arrived and
// its partial file), then checked: each copy's manifest (size and SHA-256 per file) against the source's,
// files that differ sent again. A node's marker is written only when its copy matched.
#include "cli/DataManifest.hpp"
#include "provision/Context.hpp"

#include <string>
#include <vector>

namespace ddl::cli {

struct NodeStage {
    std::string node;
    int sent_files = 0; // files rsync sent (new or changed)
    std::uint64_t sent_bytes = 0;
    int deleted = 0; // files the copy had that the source has not
    int hashed = 0;  // files hashed on the node (the others matched its cache)
    int resent = 0;  // files that differed from the source after the copy and were sent again
    double seconds = 0;
};

struct DatasetStage {
    std::string name;
    std::string path; // where the nodes read it
    int files = 0;
    std::uint64_t bytes = 0;
    int source_hashed = 0;
    std::vector<NodeStage> nodes; // by node name
    double seconds = 0;
};

// Stages `d`; `verify` hashes every file of every copy again. An Error names each node that failed.
Result<DatasetStage> stage_dataset(Context& ctx, const DatasetSpec& d, bool verify);

struct NodeDataState {
    std::string node;
    // current | stale (the source changed since) | not staged | staged (a URL source not downloaded here)
    std::string state;
    std::string staged_at;
};

// Each copy's marker against the source's manifest now (no copy is hashed).
Result<std::vector<NodeDataState>> dataset_state(Context& ctx, const DatasetSpec& d);

// "12.3 MB" (decimal units).
std::string size_text(std::uint64_t bytes);

} // namespace ddl::cli
