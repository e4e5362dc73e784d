#include "spec/DataSection.hpp"

#include "core/Url.hpp"
#include "util/Strings.hpp"

#include <filesystem>
#include <regex>
#include <set>
#include <system_error>

namespace ddl {
namespace {

namespace fs = std::filesystem;

const char* k_shared_prefix = "shared:";

bool is_archive_url(const std::string& url) {
    std::string path = url.substr(0, url.find_first_of("?#"));
    for (const char* ext : {".tar", ".tar.gz", ".tgz", ".zip"})
        if (ends_with(path, ext)) return true;
    return false;
}

// A path inside the shared folder: relative, no "..", no empty name.
bool is_inner_path(const std::string& p) {
    if (p.empty() || p.front() == '/' || p.find('\n') != std::string::npos) return false;
    for (const auto& part : split(p, '/'))
        if (part == "..") return false;
    return true;
}

void read_source(SectionReader& r, const YAML::Node& d, const std::string& path, const std::string& spec_file,
                 bool shared_folder, DatasetSpec& out) {
    auto src =
        r.string(d, "source", path, true,
                 "a folder here (e.g. ./data/imgs), shared:PATH (in the cluster's shared folder) or the "
                 "http(s) URL of a .tar, .tar.gz or .zip archive");
    if (!src) return;
    const YAML::Node node = d["source"];
    out.source = *src;
    if (starts_with(*src, "http://") || starts_with(*src, "https://")) {
        out.kind = DatasetSpec::Source::url;
        if (auto s = check_service_url(*src, true, true); !s)
            r.diags().error(r.pos(node),
                            path + ".source " + s.error().message + " (got \"" +
                                SectionReader::printable(*src) + "\")",
                            "the URL of an archive, e.g. https://example.org/imgs.tar.gz");
        else if (!is_archive_url(*src))
            r.diags().error(r.pos(node),
                            path + ".source must name a .tar, .tar.gz, .tgz or .zip archive (got \"" +
                                SectionReader::printable(*src) + "\")",
                            "ddl downloads the archive once and unpacks it before staging");
        out.location = *src;
        return;
    }
    if (starts_with(*src, k_shared_prefix)) {
        out.kind = DatasetSpec::Source::shared;
        std::string inner = src->substr(std::string(k_shared_prefix).size());
        while (inner.size() > 1 && inner.back() == '/')
            inner.pop_back();
        if (!is_inner_path(inner))
            r.diags().error(r.pos(node),
                            path + ".source " + SectionReader::printable(*src) +
                                " must name a folder inside the shared folder",
                            "a relative path without \"..\", e.g. shared:datasets/imgs");
        else if (!shared_folder)
            r.diags().error(r.pos(node), path + ".source reads the cluster's shared folder, and it has none",
                            "set \"services.nfs.enabled: true\", or give a folder on this machine");
        out.location = inner;
        return;
    }
    out.kind = DatasetSpec::Source::folder;
    if (src->find("://") != std::string::npos) {
        r.diags().error(r.pos(node),
                        path + ".source must be an http or https URL (got \"" +
                            SectionReader::printable(*src) + "\")",
                        "ddl downloads archives over HTTP(S) only; a folder is a path without \"://\"");
        return;
    }
    if (trim(*src).empty() || src->find('\n') != std::string::npos) {
        r.diags().error(r.pos(node), path + ".source must be a folder's path (got \"" +
                                         SectionReader::printable(*src) + "\")");
        return;
    }
    out.location = *src;
    if (!r.checks_files()) return;
    fs::path p(*src);
    std::error_code ec;
    if (p.is_relative()) {
        const fs::path folder = fs::path(spec_file).parent_path();
        p = (folder.empty() ? fs::current_path(ec) : fs::absolute(folder, ec)) / p;
    }
    p = p.lexically_normal();
    if (!fs::is_directory(p, ec)) {
        r.diags().error(r.pos(node),
                        path + ".source " + SectionReader::printable(*src) + " is not a folder (" +
                            p.string() + ")",
                        "a relative source is read from the spec file's folder");
        return;
    }
    std::string text = p.string();
    while (text.size() > 1 && text.back() == '/')
        text.pop_back();
    out.location = text;
}

} // namespace

bool is_dataset_name(const std::string& name) {
    static const std::regex re("^[a-z][a-z0-9_]{0,39}$");
    // DDL_DATA_DIR and DDL_DATA_DIR_DEFAULT are ddl's own variables (where it finds its playbooks).
    return std::regex_match(name, re) && name != "dir" && name != "dir_default";
}

void read_datasets(SectionReader& r, const YAML::Node& doc, const std::string& spec_file, Spec& spec) {
    const YAML::Node list = doc["datasets"];
    if (!list.IsDefined()) return;
    if (!list.IsSequence()) {
        r.diags().error(r.pos(list), "datasets must be a list (got " + YamlReader::describe(list) + ")",
                        "e.g. datasets: [{name: imgs, source: ./imgs, to: local}]");
        return;
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const YAML::Node d = list[i];
        const std::string path = "datasets[" + std::to_string(i) + "]";
        if (!r.expect_map(d, path, "e.g. {name: imgs, source: ./imgs, to: local}")) continue;
        r.check_keys(d, path, {"name", "source", "to", "format", "convert"});
        DatasetSpec ds;
        bool good = true;
        if (auto name = r.string(d, "name", path, true, "a name jobs read as DDL_DATA_<NAME>, e.g. imgs")) {
            if (!is_dataset_name(*name)) {
                r.diags().error(
                    r.pos(d["name"]),
                    path + ".name must be a dataset name (got \"" + SectionReader::printable(*name) + "\")",
                    "lowercase letters, digits and _, starting with a letter (at most 40; not dir "
                    "or dir_default); jobs read it as DDL_DATA_<NAME uppercased>");
                good = false;
            } else if (!seen.insert(*name).second) {
                r.diags().error(r.pos(d["name"]), "dataset \"" + *name + "\" is given twice",
                                "give each dataset its own name");
                good = false;
            }
            ds.name = *name;
        } else {
            good = false;
        }
        const auto before = r.diags().all().size();
        read_source(r, d, path, spec_file, spec.services.nfs, ds);
        good = good && r.diags().all().size() == before && d["source"].IsDefined();
        if (auto to = r.choice(d, "to", path, {"local", "shared"}, true)) {
            ds.to_shared = *to == "shared";
            if (ds.to_shared && !spec.services.nfs) {
                r.diags().error(
                    r.pos(d["to"]), path + ".to: shared needs the cluster's shared folder, and it has none",
                    "set \"services.nfs.enabled: true\", or stage it to every node with \"to: local\"");
                good = false;
            }
        } else {
            good = false;
        }
        if (auto f = r.choice(d, "format", path, {"files", "shards"})) ds.format = *f;
        if (auto c = r.choice(d, "convert", path, {"shards"})) {
            if (ds.kind == DatasetSpec::Source::shared || ds.format == "shards") {
                r.diags().error(r.pos(d["convert"]),
                                path + ".convert: shards packs one file per image on this machine" +
                                    (ds.format == "shards"
                                         ? std::string(", and this dataset is shards already")
                                         : ", and a shared: source is on the cluster"),
                                "drop convert, or give a folder or an archive's URL of <class>/<image>.jpg");
                good = false;
            }
            ds.convert = *c;
            ds.format = "shards"; // what the staged copy is
        }
        if (good) spec.datasets.push_back(std::move(ds));
    }
}

} // namespace ddl
