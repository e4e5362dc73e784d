// A dataset archive or folder with links that lead out of it (issue 51): the cluster's private key, a
// private folder, a chain of links that passes rsync's --safe-links. No byte of a file outside the dataset
// may reach the unpacked tree that is staged, or a shard.
#include "cli/DataPack.hpp"
#include "cli/DataSource.hpp"
#include "support/Rig.hpp"
#include "util/Process.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

using namespace ddl;
using namespace ddl::cli;
namespace fs = std::filesystem;

namespace {

const std::string k_secret = "SECRET-d41f7-cluster-private-key";
const std::string k_private = "PRIVATE-91c3e-folder-content";

void put(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

// Real processes (tar, python3) under a cluster rig's state, spec and fakes.
struct ArchiveRig : test::ClusterRig {
    SystemProcessRunner real;
    ArchiveRig() : test::ClusterRig("apiVersion: ddl/v1\nname: demo\ntarget: local\n") {}
    Context real_ctx() { return Context{spec, state, store, real, remote, progress, {}, nullptr}; }

    // dir()/outside holds the secrets; `set` is a dataset folder (train/<class>/*.jpg) whose links lead to
    // them: relative past the top, absolute, a class folder that is a link, and a chain through a link to
    // its own folder ("self/self/self/self/../../../../", textually inside the tree, really four levels up).
    std::string hostile_set(const std::string& set) {
        const fs::path out = dir.path() + "/outside";
        put(out / "id_ed25519", k_secret);
        put(out / "private/p.jpg", k_private);
        const fs::path cat = fs::path(set) / "train/cat";
        put(cat / "ok.jpg", "JPEG-ok");
        fs::create_symlink("ok.jpg", cat / "inner.jpg");
        fs::create_symlink(".", cat / "self");
        fs::create_symlink(fs::relative(out / "id_ed25519", cat), cat / "key.jpg");
        fs::create_symlink(out / "id_ed25519", cat / "shadow.jpg");
        fs::create_symlink("self/self/self/self/" + fs::relative(out / "id_ed25519", cat).string(),
                           cat / "chain.jpg");
        fs::create_symlink(out / "private", fs::path(set) / "train/dog");
        return set;
    }
};

// Every file readable under `root` through the links that are left (folder links not descended).
std::string everything_under(const std::string& root) {
    std::string all;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
        std::error_code ec;
        if (!fs::is_regular_file(it->path(), ec)) continue;
        std::ifstream f(it->path(), std::ios::binary);
        std::ostringstream s;
        s << f.rdbuf();
        all += s.str();
    }
    return all;
}

} // namespace

TEST_CASE(
    "an archive's links that lead out of it are removed when it is unpacked, and the ones inside kept") {
    ArchiveRig rig;
    const std::string build = rig.dir.path() + "/build";
    rig.hostile_set(build + "/set");
    const std::string tar = rig.dir.path() + "/hostile.tar";
    SystemProcessRunner proc;
    auto made = proc.run(Command{.argv = {"tar", "-cf", tar, "-C", build, "set"}});
    REQUIRE(made);
    REQUIRE(made->success());

    auto ctx = rig.real_ctx();
    const std::string into = rig.dir.path() + "/files";
    auto removed = unpack_archive(ctx, tar, into);
    REQUIRE(removed);
    std::vector<std::string> paths;
    for (const auto& l : *removed)
        paths.push_back(l.path);
    CHECK(paths == std::vector<std::string>{"set/train/cat/chain.jpg", "set/train/cat/key.jpg",
                                            "set/train/cat/shadow.jpg", "set/train/dog"});
    CHECK(fs::is_symlink(into + "/set/train/cat/inner.jpg"));
    CHECK(fs::is_symlink(into + "/set/train/cat/self"));
    const std::string all = everything_under(into);
    CHECK(all.find("JPEG-ok") != std::string::npos);
    CHECK(all.find(k_secret) == std::string::npos);
    CHECK(all.find(k_private) == std::string::npos);

    auto packed = pack_shards(ctx, into + "/set", rig.dir.path() + "/packed");
    INFO((packed ? "" : packed.error().message));
    REQUIRE(packed);
    CHECK(packed->images == 2); // ok.jpg and the link to it
    CHECK(packed->classes == 1);
    CHECK(packed->skipped == 0);
    const std::string shards = everything_under(rig.dir.path() + "/packed");
    CHECK(shards.find("JPEG-ok") != std::string::npos);
    CHECK(shards.find(k_secret) == std::string::npos);
    CHECK(shards.find(k_private) == std::string::npos);
}

TEST_CASE("the shard packer leaves out a folder's links that lead out of it and counts them") {
    ArchiveRig rig;
    const std::string set = rig.hostile_set(rig.dir.path() + "/set");
    auto ctx = rig.real_ctx();
    auto packed = pack_shards(ctx, set, rig.dir.path() + "/packed");
    INFO((packed ? "" : packed.error().message));
    REQUIRE(packed);
    CHECK(packed->images == 2);
    CHECK(packed->classes == 1);
    CHECK(packed->skipped == 4);
    CHECK(packed->first_skipped == "train/cat/chain.jpg");
    const std::string shards = everything_under(rig.dir.path() + "/packed");
    CHECK(shards.find(k_secret) == std::string::npos);
    CHECK(shards.find(k_private) == std::string::npos);
}

TEST_CASE("the shard packer skips a FIFO named like an image instead of waiting on it") {
    ArchiveRig rig;
    const fs::path cat = rig.dir.path() + "/set/cat";
    put(cat / "ok.jpg", "JPEG-ok");
    REQUIRE(mkfifo((cat / "fifo.jpg").c_str(), 0600) == 0);
    auto ctx = rig.real_ctx();
    auto packed = pack_shards(ctx, rig.dir.path() + "/set", rig.dir.path() + "/packed");
    REQUIRE(packed);
    CHECK(packed->images == 1);
}
