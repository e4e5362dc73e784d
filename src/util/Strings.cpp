#include "util/Strings.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <vector>

namespace ddl {

std::vector<std::string> split(std::string_view text, char sep) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        auto pos = text.find(sep, start);
        if (pos == std::string_view::npos) {
            out.emplace_back(text.substr(start));
            return out;
        }
        out.emplace_back(text.substr(start, pos - start));
        start = pos + 1;
    }
}

std::vector<std::string> split_lines(std::string_view text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        auto pos = text.find('\n', start);
        if (pos == std::string_view::npos) pos = text.size();
        auto line = text.substr(start, pos - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        out.emplace_back(line);
        start = pos + 1;
    }
    return out;
}

std::string trim(std::string_view text) {
    auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    while (!text.empty() && is_space(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && is_space(text.back()))
        text.remove_suffix(1);
    return std::string(text);
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i) out += sep;
        out += parts[i];
    }
    return out;
}

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string to_lower(std::string_view text) {
    std::string out(text);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates) {
    std::optional<std::string> best;
    std::size_t best_distance = 0;
    const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
    for (const auto& c : candidates) {
        auto d = edit_distance(to_lower(word), to_lower(c));
        if (d <= limit && (!best || d < best_distance)) {
            best = c;
            best_distance = d;
        }
    }
    return best;
}

std::optional<std::int64_t> parse_int(std::string_view text) {
    std::int64_t value = 0;
    if (text.empty()) return std::nullopt;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
    return value;
}

std::string shell_quote(std::string_view arg) {
    if (!arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) ||
                   std::string_view("-_./=:@,+%").find(c) != std::string_view::npos;
        }))
        return std::string(arg);
    std::string out = "'";
    for (char c : arg) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

std::string shell_join(const std::vector<std::string>& argv) {
    std::vector<std::string> quoted;
    quoted.reserve(argv.size());
    for (const auto& a : argv)
        quoted.push_back(shell_quote(a));
    return join(quoted, " ");
}

std::optional<std::size_t> find_invalid_utf8(std::string_view text) {
    std::size_t i = 0;
    while (i < text.size()) {
        auto c = static_cast<unsigned char>(text[i]);
        std::size_t extra = 0;
        if (c < 0x80)
            extra = 0;
        else if ((c >> 5) == 0x6 && c >= 0xC2)
            extra = 1;
        else if ((c >> 4) == 0xE)
            extra = 2;
        else if ((c >> 3) == 0x1E && c <= 0xF4)
            extra = 3;
        else
            return i;
        if (i + extra >= text.size()) return i;
        for (std::size_t k = 1; k <= extra; ++k) {
            if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return i;
        }
        i += extra + 1;
    }
    return std::nullopt;
}

namespace {

bool invisible(std::uint32_t cp) {
    return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
}

std::string hex_escape(const char* prefix, std::uint32_t value, int width, const char* suffix) {
    static const char* digits = "0123456789abcdef";
    std::string out = prefix;
    for (int shift = (width - 1) * 4; shift >= 0; shift -= 4)
        out += digits[(value >> shift) & 0xF];
    return out + suffix;
}

} // namespace

std::string printable_utf8(std::string_view text, std::size_t max_chars) {
    std::vector<std::string> chars;
    std::size_t i = 0;
    while (i < text.size()) {
        auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            chars.push_back(c < 0x20 || c == 0x7F ? hex_escape("\\x", c, 2, "")
                                                  : std::string(1, static_cast<char>(c)));
            ++i;
            continue;
        }
        auto bad = find_invalid_utf8(text.substr(i, 4));
        std::size_t len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
        if (bad && *bad == 0) {
            chars.push_back(hex_escape("\\x", c, 2, ""));
            ++i;
            continue;
        }
        std::uint32_t cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
        for (std::size_t k = 1; k < len; ++k)
            cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
        chars.push_back(invisible(cp) ? hex_escape("\\u{", cp, 4, "}") : std::string(text.substr(i, len)));
        i += len;
    }
    std::string out;
    const bool cut = chars.size() > max_chars;
    const std::size_t keep = cut ? (max_chars > 3 ? max_chars - 3 : 0) : chars.size();
    for (std::size_t k = 0; k < keep; ++k)
        out += chars[k];
    return cut ? out + "..." : out;
}

bool is_valid_utf8(std::string_view text) {
    return !find_invalid_utf8(text).has_value();
}

std::optional<long long> parse_duration_s(const std::string& text) {
    if (text.size() < 2) return std::nullopt;
    auto n = parse_int(text.substr(0, text.size() - 1));
    // Bounded so that scaling to seconds cannot overflow.
    if (!n || *n < 0 || *n > 100LL * 366 * 86400) return std::nullopt;
    switch (text.back()) {
    case 's':
        return *n;
    case 'm':
        return *n * 60;
    case 'h':
        return *n * 3600;
    case 'd':
        return *n * 86400;
    default:
        return std::nullopt;
    }
}

} // namespace ddl
