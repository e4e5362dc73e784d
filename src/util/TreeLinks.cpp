#include "util/TreeLinks.hpp"

#include <algorithm>
#include <filesystem>

namespace ddl {

Result<std::vector<EscapingLink>> escaping_links(const std::string& root) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path top = fs::canonical(root, ec);
    if (ec) return Error{"cannot read " + root + ": " + ec.message()};
    std::vector<EscapingLink> out;
    fs::recursive_directory_iterator it(top, fs::directory_options::none, ec);
    if (ec) return Error{"cannot read " + root + ": " + ec.message()};
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) return Error{"cannot read " + root + ": " + ec.message()};
        if (!it->is_symlink(ec)) continue;
        const fs::path target = fs::read_symlink(it->path(), ec);
        if (ec) return Error{"cannot read the link " + it->path().string() + ": " + ec.message()};
        bool escapes = target.is_absolute();
        if (!escapes) {
            // A loop (ELOOP) resolves nowhere; it is dropped with the others rather than trusted.
            const fs::path resolved = fs::weakly_canonical(it->path().parent_path() / target, ec);
            const fs::path rel = ec ? fs::path("..") : resolved.lexically_relative(top);
            escapes = rel.empty() || *rel.begin() == "..";
            ec.clear();
        }
        if (escapes) out.push_back({it->path().lexically_relative(top).string(), target.string()});
    }
    std::sort(out.begin(), out.end(),
              [](const EscapingLink& a, const EscapingLink& b) { return a.path < b.path; });
    return out;
}

} // namespace ddl
