#include "provision/RuntimeArchive.hpp"

#include "util/Files.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <sys/stat.h>
#include <system_error>
#include <vector>

namespace ddl {

namespace {

constexpr std::size_t k_block = 512;

// An octal number right-aligned in `width` bytes, NUL-terminated, as ustar's numeric fields are.
bool put_octal(char* field, std::size_t width, unsigned long long value) {
    std::array<char, 32> text{};
    int n = std::snprintf(text.data(), text.size(), "%0*llo", static_cast<int>(width - 1), value);
    if (n < 0 || static_cast<std::size_t>(n) != width - 1) return false;
    std::copy_n(text.data(), width, field);
    return true;
}

// ustar splits a long name into prefix (155 bytes) and name (100) at a '/'.
bool put_name(char* header, const std::string& path) {
    if (path.size() <= 100) {
        std::copy(path.begin(), path.end(), header);
        return true;
    }
    for (std::size_t cut = path.rfind('/', 155); cut != std::string::npos && cut > 0;
         cut = path.rfind('/', cut - 1)) {
        if (path.size() - cut - 1 > 100) return false;
        std::copy(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(cut), header + 345);
        std::copy(path.begin() + static_cast<std::ptrdiff_t>(cut) + 1, path.end(), header);
        return true;
    }
    return false;
}

Result<std::string> header(const std::string& name, const struct stat& st, char type, const std::string& link,
                           std::size_t size) {
    std::string h(k_block, '\0');
    char* p = h.data();
    if (!put_name(p, name)) return Error{"the runtime's path " + name + " is too long for a tar archive"};
    if (link.size() > 100) return Error{"the runtime's link " + name + " points too far for a tar archive"};
    bool ok = put_octal(p + 100, 8, st.st_mode & 07777) && put_octal(p + 108, 8, 0) &&
              put_octal(p + 116, 8, 0) && put_octal(p + 124, 12, size) &&
              put_octal(p + 136, 12, static_cast<unsigned long long>(std::max<time_t>(0, st.st_mtime)));
    if (!ok) return Error{"the runtime's file " + name + " does not fit a tar header"};
    p[156] = type;
    std::copy(link.begin(), link.end(), p + 157);
    std::copy_n("ustar", 6, p + 257); // magic "ustar\0", version "00"
    p[263] = '0';
    p[264] = '0';
    std::copy_n("root", 4, p + 265);
    std::copy_n("root", 4, p + 297);
    std::fill_n(p + 148, 8, ' '); // the checksum counts its own field as spaces
    unsigned sum = 0;
    for (char c : h)
        sum += static_cast<unsigned char>(c);
    std::array<char, 8> text{};
    std::snprintf(text.data(), text.size(), "%06o", sum);
    std::copy_n(text.data(), 7, p + 148); // six digits, NUL, and the space already there
    return h;
}

} // namespace

Result<std::string> pack_runtime(const std::string& dist) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dist, ec))
        return Error{"the runtime folder " + dist + " does not exist: build ddl first (cmake --build build)"};
    auto names = list_tree_files(dist);
    if (!names) return names.error();
    if (names->empty())
        return Error{"the runtime folder " + dist + " is empty: build ddl first (cmake --build build)"};
    std::string out;
    for (const auto& relative : *names) {
        const std::string name = "./" + relative, path = dist + "/" + relative;
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0) return Error{"cannot read " + path};
        std::string link, data;
        if (S_ISLNK(st.st_mode)) {
            link = fs::read_symlink(path, ec).string();
            if (ec) return Error{"cannot read the link " + path + ": " + ec.message()};
        } else {
            auto content = read_file(path);
            if (!content) return content.error();
            data = std::move(*content);
        }
        auto h = header(name, st, S_ISLNK(st.st_mode) ? '2' : '0', link, data.size());
        if (!h) return h.error();
        out += *h;
        out += data;
        out.append((k_block - data.size() % k_block) % k_block, '\0');
    }
    out.append(2 * k_block, '\0'); // the end: two zero blocks
    return out;
}

} // namespace ddl
