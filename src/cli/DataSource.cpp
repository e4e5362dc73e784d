#include "cli/DataSource.hpp"

#include "cli/DataPack.hpp"
#include "core/Log.hpp"
#include "net/Curl.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

namespace ddl::cli {
namespace {

namespace fs = std::filesystem;

const char* k_recorded_sources =
    "datasets.json"; // in the cluster's state folder: name -> absolute source folder

std::string data_dir(const Context& ctx, const DatasetSpec& d) {
    return ctx.cluster_dir() + "/data/" + d.name;
}

std::string archive_name(const std::string& url) {
    const std::string path = url.substr(0, url.find_first_of("?#"));
    for (const char* ext : {".tar.gz", ".tgz", ".zip"})
        if (ends_with(path, ext)) return std::string("archive") + ext;
    return "archive.tar";
}

// The unpacked archive's root: its one folder when it holds nothing else, else the folder itself.
std::string archive_root(const std::string& dir) {
    std::error_code ec;
    std::vector<fs::directory_entry> entries;
    for (const auto& e : fs::directory_iterator(dir, ec))
        entries.push_back(e);
    if (entries.size() == 1 && entries[0].is_directory(ec) && !entries[0].is_symlink(ec))
        return entries[0].path().string();
    return dir;
}

Result<SourceDir> fetch_url(Context& ctx, const DatasetSpec& d, bool fetch) {
    const std::string dir = data_dir(ctx, d);
    const std::string files = dir + "/files";
    SourceDir out{.cache = dir + "/files.manifest"};
    auto had = read_file(dir + "/source.url");
    if (had && trim(*had) == d.location && path_exists(files)) {
        out.dir = archive_root(files);
        return out;
    }
    if (!fetch)
        return Error{"dataset " + d.name + " (" + d.location +
                     ") is not downloaded yet; run `ddl data stage " + ctx.state.cluster + " " + d.name +
                     "`"};
    if (auto s = make_dirs(dir, 0700); !s) return s.error();
    std::error_code ec;
    fs::remove(dir + "/source.url", ec);
    const std::string archive = dir + "/" + archive_name(d.location);
    ctx.progress.note("data " + d.name + ": downloading " + d.location);
    auto got = http_download(d.location, archive, std::chrono::hours(6));
    if (!got) return got.error();
    auto removed = unpack_archive(ctx, archive, files);
    if (!removed) return removed.error();
    if (!removed->empty())
        ctx.progress.note("warning: data " + d.name + ": removed " + std::to_string(removed->size()) +
                          " link(s) of the archive that lead out of it (first: " + removed->front().path +
                          " -> " + removed->front().target + "); no file outside the archive is staged");
    fs::remove(archive, ec); // the unpacked files are the cache
    fs::remove(out.cache, ec);
    if (auto s = write_file_atomic(dir + "/source.url", d.location + "\n"); !s) return s.error();
    out.dir = archive_root(files);
    out.downloaded = true;
    out.downloaded_bytes = *got;
    return out;
}

Result<SourceDir> resolve_unconverted(Context& ctx, const DatasetSpec& d, bool fetch) {
    switch (d.kind) {
    case DatasetSpec::Source::url:
        return fetch_url(ctx, d, fetch);
    case DatasetSpec::Source::shared: {
        const std::string shared = ctx.spec.services.nfs_mount;
        return SourceDir{.dir = shared + "/" + d.location,
                         .in_cluster = true,
                         .cache = shared + "/ddl-data/." + d.name + ".source-manifest"};
    }
    case DatasetSpec::Source::folder:
        break;
    }
    std::string path = d.location;
    if (!fs::path(path).is_absolute()) {
        auto text = read_file(ctx.cluster_dir() + "/" + k_recorded_sources);
        auto j = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
        if (!j.is_object() || !j.contains(d.name) || !j[d.name].is_string())
            return Error{"dataset " + d.name + "'s source " + d.location +
                         " is relative to its spec file; run `ddl deploy SPEC` once to record where it is"};
        path = j[d.name].get<std::string>();
    }
    std::error_code ec;
    if (!fs::is_directory(path, ec))
        return Error{"dataset " + d.name + "'s source " + path + " is not a folder"};
    return SourceDir{.dir = path, .cache = data_dir(ctx, d) + ".source-manifest"};
}

} // namespace

Result<std::vector<EscapingLink>> unpack_archive(Context& ctx, const std::string& archive,
                                                 const std::string& into) {
    std::error_code ec;
    fs::remove_all(into, ec);
    if (auto s = make_dirs(into, 0755); !s) return s.error();
    // GNU tar writes a link that is absolute or holds ".." as a placeholder file until the end, so no
    // member lands through one; zipfile makes no links at all (a link member becomes a file of its text).
    Command c{.argv = ends_with(archive, ".zip")
                          ? std::vector<std::string>{"python3", "-m", "zipfile", "-e", archive, into}
                          : std::vector<std::string>{"tar", "-xf", archive, "-C", into, "--no-same-owner"},
              .timeout = std::chrono::hours(2)};
    auto r = ctx.proc.run(c);
    if (!r) return r.error();
    if (!r->success()) return Error{"cannot unpack " + archive + ": " + describe_failure(c, *r)};
    // The links tar did make are then removed where they lead out of the tree, so neither the packer nor a
    // copy on a node can reach this machine's files through them.
    auto escaping = escaping_links(into);
    if (!escaping) return escaping.error();
    for (const auto& l : *escaping) {
        fs::remove(fs::path(into) / l.path, ec);
        if (ec) return Error{"cannot remove the link " + into + "/" + l.path + ": " + ec.message()};
    }
    return escaping;
}

Result<SourceDir> resolve_source(Context& ctx, const DatasetSpec& d, bool fetch) {
    auto src = resolve_unconverted(ctx, d, fetch);
    if (!src || d.convert.empty()) return src;
    const std::string out = data_dir(ctx, d) + "/packed";
    if (auto s = make_dirs(data_dir(ctx, d), 0700); !s) return s.error();
    auto p = pack_shards(ctx, src->dir, out);
    if (!p) return Error{"dataset " + d.name + ": " + p.error().message};
    if (p->skipped > 0)
        ctx.progress.note("warning: data " + d.name + ": left out " + std::to_string(p->skipped) +
                          " link(s) that lead out of " + src->dir + " (first: " + p->first_skipped +
                          "); ddl packs no file outside a dataset's folder");
    if (p->packed)
        ctx.progress.note("data " + d.name + ": packed " + std::to_string(p->images) + " images of " +
                          std::to_string(p->classes) + " classes into " + std::to_string(p->shards) +
                          " shard(s)");
    src->dir = out;
    src->cache = out + ".manifest";
    return src;
}

Status record_dataset_sources(const Context& ctx, const Spec& from_file) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& d : from_file.datasets)
        if (d.kind == DatasetSpec::Source::folder && fs::path(d.location).is_absolute())
            j[d.name] = d.location;
    return write_file_atomic(ctx.cluster_dir() + "/" + k_recorded_sources, j.dump(2) + "\n");
}

} // namespace ddl::cli
