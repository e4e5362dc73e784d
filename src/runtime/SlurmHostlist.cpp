#include "runtime/SlurmHostlist.hpp"

#include "util/Strings.hpp"

namespace ddl::runtime {
namespace {

// Splits at commas outside brackets.
std::vector<std::string> split_top_level(const std::string& text) {
    std::vector<std::string> parts;
    std::string cur;
    int depth = 0;
    for (char c : text) {
        if (c == '[') ++depth;
        if (c == ']') --depth;
        if (c == ',' && depth == 0) {
            parts.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    parts.push_back(cur);
    return parts;
}

bool all_digits(const std::string& s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// "01-03,7" -> {"01","02","03","7"}, keeping the width of the range's first number.
ddl::Result<std::vector<std::string>> expand_range_list(const std::string& body, const std::string& whole) {
    std::vector<std::string> out;
    for (const auto& item : split(body, ',')) {
        auto dash = item.find('-');
        std::string lo = item.substr(0, dash);
        std::string hi = dash == std::string::npos ? lo : item.substr(dash + 1);
        if (!all_digits(lo) || !all_digits(hi) || lo.size() > 9 || hi.size() > 9)
            return ddl::Error{"host list \"" + whole + "\": \"" + item + "\" is not a number or range"};
        const long a = std::stol(lo), b = std::stol(hi);
        if (b < a || b - a > 100000)
            return ddl::Error{"host list \"" + whole + "\": range \"" + item + "\" is reversed or too long"};
        for (long v = a; v <= b; ++v) {
            std::string digits = std::to_string(v);
            if (digits.size() < lo.size()) digits.insert(0, lo.size() - digits.size(), '0');
            out.push_back(digits);
        }
    }
    return out;
}

} // namespace

ddl::Result<std::vector<std::string>> expand_slurm_hostlist(const std::string& list) {
    std::vector<std::string> hosts;
    const std::string text = trim(list);
    if (text.empty()) return ddl::Error{"the host list is empty"};
    for (const auto& part : split_top_level(text)) {
        if (part.empty()) return ddl::Error{"host list \"" + text + "\" has an empty entry"};
        // Cartesian product over the bracket groups, left to right.
        std::vector<std::string> names{""};
        std::size_t pos = 0;
        while (pos < part.size()) {
            auto open = part.find('[', pos);
            std::string literal =
                part.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
            if (literal.find(']') != std::string::npos)
                return ddl::Error{"host list \"" + text + "\": unbalanced ']' in \"" + part + "\""};
            for (auto& n : names)
                n += literal;
            if (open == std::string::npos) break;
            auto close = part.find(']', open);
            if (close == std::string::npos)
                return ddl::Error{"host list \"" + text + "\": unbalanced '[' in \"" + part + "\""};
            auto values = expand_range_list(part.substr(open + 1, close - open - 1), text);
            if (!values) return values.error();
            std::vector<std::string> next;
            for (const auto& n : names)
                for (const auto& v : *values)
                    next.push_back(n + v);
            names = std::move(next);
            pos = close + 1;
        }
        hosts.insert(hosts.end(), names.begin(), names.end());
    }
    return hosts;
}

std::optional<int> slurm_tasks_on_node(const std::string& tasks_per_node, int node_index) {
    if (node_index < 0) return std::nullopt;
    int seen = 0;
    for (const auto& item : split(trim(tasks_per_node), ',')) {
        // "N" or "N(xR)"
        auto paren = item.find('(');
        auto count = parse_int(item.substr(0, paren));
        std::int64_t repeat = 1;
        if (paren != std::string::npos) {
            if (item.size() < paren + 4 || item.compare(paren, 2, "(x") != 0 || item.back() != ')')
                return std::nullopt;
            auto r = parse_int(item.substr(paren + 2, item.size() - paren - 3));
            if (!r) return std::nullopt;
            repeat = *r;
        }
        if (!count || *count < 1 || repeat < 1) return std::nullopt;
        if (node_index < seen + repeat) return static_cast<int>(*count);
        seen += static_cast<int>(repeat);
    }
    return std::nullopt;
}

} // namespace ddl::runtime
