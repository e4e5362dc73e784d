#pragma once
// A dataset's conversion before staging (spec key datasets, convert: shards): one JPEG file per image in
// class folders (`train/<class>/*.jpg` or `<class>/*.jpg`) packed on this machine into WebDataset-style
// tar shards (`shards/shard-NNNNNN.tar` with `<key>.jpg` and `<key>.cls` members, src/runtime/README.md,
// "ddl_data"), the layout `ddl bench train --data` and ddl_data's ShardDataset read. The shards are made
// again only when a source file's name, size or modification time changed, and the same input gives the
// same bytes, so a second stage sends nothing. A link that leads out of the source folder is left out (and
// counted): the packer reads no file outside it.
#include "provision/Context.hpp"

#include <string>

namespace ddl::cli {

// Images per shard.
inline constexpr int k_images_per_shard = 1000;

struct PackResult {
    bool packed = false; // false: the shards were already made from these files
    int images = 0;
    int classes = 0;
    int shards = 0;
    int skipped = 0;           // links left out: they lead out of the source folder
    std::string first_skipped; // the first of them, relative to the source folder
};

// Packs `src` into `out` (written beside it as out.part, then renamed into place).
Result<PackResult> pack_shards(Context& ctx, const std::string& src, const std::string& out);

} // namespace ddl::cli
