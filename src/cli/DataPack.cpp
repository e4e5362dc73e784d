#include "cli/DataPack.hpp"

#include "util/Strings.hpp"

#include <nlohmann/json.hpp>

namespace ddl::cli {
namespace {

// argv: SRC OUT IMAGES_PER_SHARD. Prints one JSON object: packed, images, classes, shards. Deterministic:
// sorted input, a fixed shuffle (a shard mixes classes), tar members with mtime 0 and no owner names.
const char* k_pack_program = R"PY(import hashlib, io, json, os, random, shutil, sys, tarfile
src, out, per = sys.argv[1], sys.argv[2], int(sys.argv[3])
top = os.path.join(src, "train") if os.path.isdir(os.path.join(src, "train")) else src
classes = sorted(e.name for e in os.scandir(top) if e.is_dir() and not e.name.startswith("."))
items = []
for c, name in enumerate(classes):
    for f in sorted(os.listdir(os.path.join(top, name))):
        p = os.path.join(top, name, f)
        if f.lower().endswith((".jpg", ".jpeg")) and os.path.isfile(p):
            st = os.stat(p)
            items.append((c, name, f, p, st.st_size, st.st_mtime_ns))
if not items:
    sys.exit(top + ": no images to pack (convert: shards reads <class>/<image>.jpg, or train/<class>/<image>.jpg)")
stamp = hashlib.sha256(json.dumps([[i[1], i[2], i[4], i[5]] for i in items] + [per]).encode()).hexdigest()
count = (len(items) + per - 1) // per
result = {"packed": False, "images": len(items), "classes": len(classes), "shards": count}
try:
    with open(os.path.join(out, ".ddl-pack")) as f:
        if f.read().strip() == stamp:
            print(json.dumps(result))
            sys.exit(0)
except OSError:
    pass
random.Random(0).shuffle(items)
tmp = out + ".part"
shutil.rmtree(tmp, ignore_errors=True)
os.makedirs(os.path.join(tmp, "shards"))

def add(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime, info.uname, info.gname = len(data), 0o644, 0, "", ""
    tar.addfile(info, io.BytesIO(data))

for s in range(count):
    path = os.path.join(tmp, "shards", "shard-%06d.tar" % s)
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for n, (c, name, f, p, size, _) in enumerate(items[s * per:(s + 1) * per], s * per):
            with open(p, "rb") as img:
                add(tar, "s%08d.jpg" % n, img.read())
            add(tar, "s%08d.cls" % n, str(c).encode())
with open(os.path.join(tmp, "classes.txt"), "w") as f:
    f.write("".join(name + "\n" for name in classes))
with open(os.path.join(tmp, ".ddl-pack"), "w") as f:
    f.write(stamp + "\n")
shutil.rmtree(out, ignore_errors=True)
os.rename(tmp, out)
result["packed"] = True
print(json.dumps(result))
)PY";

} // namespace

Result<PackResult> pack_shards(Context& ctx, const std::string& src, const std::string& out) {
    Command c{.argv = {"python3", "-c", k_pack_program, src, out, std::to_string(k_images_per_shard)},
              .timeout = std::chrono::hours(6)};
    auto r = ctx.proc.run(c);
    if (!r) return r.error();
    if (!r->success()) return Error{"cannot pack " + src + " into shards: " + describe_failure(c, *r)};
    const auto j = nlohmann::json::parse(trim(r->out), nullptr, false);
    if (!j.is_object() || !j.contains("images"))
        return Error{"cannot pack " + src + " into shards: unexpected output " + trim(r->out)};
    return PackResult{.packed = j.value("packed", false),
                      .images = j.value("images", 0),
                      .classes = j.value("classes", 0),
                      .shards = j.value("shards", 0)};
}

} // namespace ddl::cli
