#include "util/Digest.hpp"

#include "util/Files.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

namespace ddl {

void Digest::mix(const char* data, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        m_h ^= static_cast<unsigned char>(data[i]);
        m_h *= 1099511628211ULL;
    }
}

Digest& Digest::add(const std::string& piece) {
    std::string len = std::to_string(piece.size()) + ":";
    mix(len.data(), len.size());
    mix(piece.data(), piece.size());
    return *this;
}

Digest& Digest::add_file(const std::string& path) {
    auto text = read_file(path);
    return text ? add("file").add(*text) : add("missing file");
}

Status Digest::add_tree(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        add("missing folder");
        return {};
    }
    std::vector<fs::path> entries;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        if (it->path().filename() == "__pycache__") {
            it.disable_recursion_pending();
            continue;
        }
        auto st = it->symlink_status(ec);
        if (!ec && (fs::is_regular_file(st) || fs::is_symlink(st))) entries.push_back(it->path());
    }
    if (ec) return Error{"cannot read " + dir + ": " + ec.message()};
    std::sort(entries.begin(), entries.end());
    for (const auto& p : entries) {
        add(fs::relative(p, dir).string());
        if (fs::is_symlink(fs::symlink_status(p, ec))) {
            add("link").add(fs::read_symlink(p, ec).string());
        } else {
            add_file(p.string());
        }
    }
    return {};
}

std::string Digest::hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(m_h));
    return buf;
}

} // namespace ddl
