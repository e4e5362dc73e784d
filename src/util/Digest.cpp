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
    auto names = list_tree_files(dir);
    if (!names) return names.error();
    for (const auto& name : *names) {
        add(name);
        const std::string path = dir + "/" + name;
        if (fs::is_symlink(fs::symlink_status(path, ec))) {
            add("link").add(fs::read_symlink(path, ec).string());
        } else {
            add_file(path);
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
