#pragma once
// Where a dataset's files are before `ddl data stage` copies them (spec key datasets, source): a folder
// on this machine, an archive's URL downloaded once into the cluster's state folder and unpacked there,
// or a folder in the cluster's shared folder, read on the master.
#include "provision/Context.hpp"
#include "util/TreeLinks.hpp"

#include <cstdint>
#include <string>

namespace ddl::cli {

struct SourceDir {
    std::string dir; // the folder whose contents are the dataset
    // `dir` is in the shared folder, seen by every node (a shared: source); else on this machine.
    bool in_cluster = false;
    std::string cache; // the manifest cache for `dir`, on the same side
    bool downloaded = false;
    std::uint64_t downloaded_bytes = 0;
};

// `d`'s folder. A relative folder source of a stored spec is the one recorded by the last `ddl deploy`; a
// URL is downloaded and unpacked when this cluster has no copy of it yet (`fetch` false: an Error then).
Result<SourceDir> resolve_source(Context& ctx, const DatasetSpec& d, bool fetch);

// Unpacks `archive` (.tar, .tar.gz, .tgz, .zip) into the folder `into` (made anew), then removes every link
// in it that leads out of it (util/TreeLinks.hpp); returns the removed links.
Result<std::vector<EscapingLink>> unpack_archive(Context& ctx, const std::string& archive,
                                                 const std::string& into);

// Records the absolute folders of the datasets of `from_file` (a spec read from its file), so commands
// on the stored spec find relative ones.
Status record_dataset_sources(const Context& ctx, const Spec& from_file);

} // namespace ddl::cli
