#include "cli/DataPack.hpp"

#include "util/Strings.hpp"

#include <nlohmann/json.hpp>

namespace ddl::cli {
namespace {

// argv: SRC OUT IMAGES_PER_SHARD. Prints one JSON object: packed, images, classes, shards, skipped (links
// left out) and first_skipped. Deterministic: sorted input, a fixed shuffle (a shard mixes classes), tar
// members with mtime 0 and no owner names. A link is followed only where it resolves inside SRC, and only
// regular files are read (opened without waiting, so a FIFO named x.jpg cannot hang it): no byte of a file
// outside the dataset's folder reaches a shard.
const char* k_pack_program = R"PY(import hashlib, io, json, os, random, shutil, stat, sys, tarfile
src, out, per = sys.argv[1], sys.argv[2], int(sys.argv[3])
root = os.path.realpath(src)
skipped = []
def inside(p, fd=None):
    try:
        r = os.readlink("/proc/self/fd/%d" % fd) if fd is not None else os.path.realpath(p)
    except OSError:
        r = os.path.realpath(p)
    return r == root or r.startswith(root.rstrip(os.sep) + os.sep)
def keep(p):
    if inside(p):
        return True
    skipped.append(os.path.relpath(p, src))
    return False
top = os.path.join(src, "train")
if not (os.path.isdir(top) and keep(top)):
    top = src
classes = sorted(e.name for e in os.scandir(top) if e.is_dir() and not e.name.startswith(".") and keep(e.path))
items = []
for c, name in enumerate(classes):
    for f in sorted(os.listdir(os.path.join(top, name))):
        p = os.path.join(top, name, f)
        if not f.lower().endswith((".jpg", ".jpeg")) or not keep(p):
            continue
        try:
            st = os.stat(p)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            items.append((c, name, f, p, st.st_size, st.st_mtime_ns))
skipped = sorted(set(skipped))
if not items:
    sys.exit(top + ": no images to pack (convert: shards reads <class>/<image>.jpg, or train/<class>/<image>.jpg)")
stamp = hashlib.sha256(json.dumps([[i[1], i[2], i[4], i[5]] for i in items] + [per]).encode()).hexdigest()
count = (len(items) + per - 1) // per
result = {"packed": False, "images": len(items), "classes": len(classes), "shards": count,
          "skipped": len(skipped), "first_skipped": skipped[0] if skipped else ""}
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
            fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
            with os.fdopen(fd, "rb") as img:
                if not stat.S_ISREG(os.fstat(fd).st_mode) or not inside(p, fd):
                    sys.exit(p + ": changed into something other than a file of the dataset while packing")
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
                      .shards = j.value("shards", 0),
                      .skipped = j.value("skipped", 0),
                      .first_skipped = j.value("first_skipped", std::string())};
}

} // namespace ddl::cli
