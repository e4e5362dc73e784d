#include "cli/OptionChecks.hpp"

#include "util/Strings.hpp"

namespace ddl::cli {

const CLI::Validator
    k_non_empty([](std::string& v) { return v.empty() ? std::string("must not be empty") : std::string(); },
                "NON-EMPTY");

const CLI::Validator k_seconds(
    [](std::string& v) {
        auto n = parse_int(v);
        if (!n) return std::string("must be a whole number of seconds, e.g. 90 (got \"" + v + "\")");
        if (*n < 1 || *n > 7L * 86400) return std::string("must be between 1 and 604800 seconds (7 days)");
        return std::string();
    },
    "SECONDS");

Result<std::vector<int>> parse_int_list(const std::string& text, int max, const std::string& what, int min) {
    std::vector<int> out;
    auto dots = text.find("..");
    if (dots != std::string::npos) {
        auto lo = parse_int(text.substr(0, dots)), hi = parse_int(text.substr(dots + 2));
        if (!lo || !hi || *lo < min || *hi < *lo || *hi > max)
            return Error{what + " " + text + ": give A..B with " + std::to_string(min) +
                         " <= A <= B <= " + std::to_string(max)};
        for (auto i = *lo; i <= *hi; ++i)
            out.push_back(static_cast<int>(i));
        return out;
    }
    for (const auto& part : split(text, ',')) {
        auto v = parse_int(trim(part));
        if (!v || *v < min || *v > max)
            return Error{what + " " + text + ": values must be " + std::to_string(min) + "-" +
                         std::to_string(max)};
        out.push_back(static_cast<int>(*v));
    }
    return out;
}

} // namespace ddl::cli
