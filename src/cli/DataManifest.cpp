#include "cli/DataManifest.hpp"

#include "util/Digest.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <set>

namespace ddl::cli {
namespace {

// Walks DIR (argv[1]) in name order, skipping rsync's partial folders (.ddl-partial); a file whose size,
// mtime, ctime and inode match its line in the cache (argv[2]) keeps the cached hash unless argv[3] is
// "all". Writes the new cache (temp file, then rename), then prints the manifest.
const char* k_program = R"PY(import hashlib, io, os, stat, sys
root, cache, mode = sys.argv[1], sys.argv[2], sys.argv[3]
if not os.path.isdir(root):
    sys.exit("no folder " + root)
out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="surrogateescape")
old = {}
try:
    with open(cache, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 5)
            if len(parts) == 6:
                old[parts[5]] = parts[:5]
except OSError:
    pass
rows, hashed = [], 0
for d, dirs, files in os.walk(root):
    dirs[:] = sorted(x for x in dirs if x != ".ddl-partial")
    for n in sorted(files):
        p = os.path.join(d, n)
        rel = os.path.relpath(p, root)
        st = os.lstat(p)
        if not stat.S_ISREG(st.st_mode):
            continue
        if "\n" in rel:
            sys.exit("a file name with a line break: " + repr(rel))
        key = [str(st.st_size), str(st.st_mtime_ns), str(st.st_ctime_ns), str(st.st_ino)]
        c = old.get(rel)
        if mode != "all" and c is not None and c[1:] == key:
            sha = c[0]
        else:
            h = hashlib.sha256()
            with open(p, "rb") as f:
                for b in iter(lambda: f.read(1 << 20), b""):
                    h.update(b)
            sha, hashed = h.hexdigest(), hashed + 1
        rows.append((rel, sha, key))
rows.sort()
tmp = cache + ".tmp"
with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as f:
    for rel, sha, key in rows:
        f.write(" ".join([sha] + key + [rel]) + "\n")
os.replace(tmp, cache)
for rel, sha, key in rows:
    out.write("%s %s %s\n" % (sha, key[0], rel))
out.write("# hashed %d\n" % hashed)
out.flush()
)PY";

bool is_hex64(const std::string& s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

} // namespace

std::uint64_t Manifest::bytes() const {
    std::uint64_t n = 0;
    for (const auto& f : files)
        n += f.size;
    return n;
}

std::string Manifest::digest() const {
    Digest d;
    d.add("manifest/1");
    for (const auto& f : files)
        d.add(f.path).add(std::to_string(f.size)).add(f.sha256);
    return d.hex();
}

std::vector<std::string> manifest_argv(const std::string& dir, const std::string& cache, bool rehash_all) {
    return {"python3", "-c", k_program, dir, cache, rehash_all ? "all" : "changed"};
}

Result<Manifest> parse_manifest(const std::string& text) {
    Manifest m;
    bool trailer = false;
    int n = 0;
    for (const auto& line : split_lines(text)) {
        ++n;
        if (line.empty()) continue;
        if (starts_with(line, "# hashed ")) {
            auto count = parse_int(line.substr(9));
            if (!count) return Error{"manifest line " + std::to_string(n) + ": unreadable count"};
            m.hashed = static_cast<int>(*count);
            trailer = true;
            continue;
        }
        const auto a = line.find(' ');
        const auto b = a == std::string::npos ? a : line.find(' ', a + 1);
        auto size = b == std::string::npos ? std::nullopt : parse_int(line.substr(a + 1, b - a - 1));
        if (b == std::string::npos || !is_hex64(line.substr(0, a)) || !size || *size < 0 ||
            b + 1 >= line.size())
            return Error{"manifest line " + std::to_string(n) + " is not \"SHA256 SIZE PATH\": " + line};
        m.files.push_back({line.substr(b + 1), static_cast<std::uint64_t>(*size), line.substr(0, a)});
    }
    if (!trailer) return Error{"the manifest ends early (no \"# hashed\" line)"};
    std::sort(m.files.begin(), m.files.end(),
              [](const ManifestEntry& x, const ManifestEntry& y) { return x.path < y.path; });
    return m;
}

std::vector<std::string> ManifestDiff::to_send() const {
    std::vector<std::string> out = missing;
    out.insert(out.end(), changed.begin(), changed.end());
    std::sort(out.begin(), out.end());
    return out;
}

ManifestDiff diff_manifests(const Manifest& source, const Manifest& copy) {
    ManifestDiff d;
    auto s = source.files.begin();
    auto c = copy.files.begin();
    while (s != source.files.end() || c != copy.files.end()) {
        if (c == copy.files.end() || (s != source.files.end() && s->path < c->path)) {
            d.missing.push_back((s++)->path);
        } else if (s == source.files.end() || c->path < s->path) {
            d.extra.push_back((c++)->path);
        } else {
            if (s->size != c->size || s->sha256 != c->sha256) d.changed.push_back(s->path);
            ++s;
            ++c;
        }
    }
    return d;
}

} // namespace ddl::cli
