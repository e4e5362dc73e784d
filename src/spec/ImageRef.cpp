#include "spec/ImageRef.hpp"

#include <regex>

namespace ddl {

std::optional<ImageRef> parse_image_ref(const std::string& text) {
    if (text.empty() || text.size() > 255) return std::nullopt;
    static const std::regex component("^[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*$");
    static const std::regex registry(
        "^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*"
        "(:[0-9]{1,5})?$");
    static const std::regex tag("^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$");
    static const std::regex digest("^sha256:[a-f0-9]{64}$");
    ImageRef out;
    std::string rest = text;
    if (auto at = rest.find('@'); at != std::string::npos) {
        out.digest = rest.substr(at + 1);
        rest.resize(at);
        if (!std::regex_match(out.digest, digest)) return std::nullopt;
    }
    // A ':' after the last '/' starts the tag; one before it belongs to the registry's port.
    auto slash = rest.rfind('/');
    if (auto colon = rest.rfind(':');
        colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
        out.tag = rest.substr(colon + 1);
        rest.resize(colon);
        if (!std::regex_match(out.tag, tag)) return std::nullopt;
    }
    auto first_slash = rest.find('/');
    if (first_slash != std::string::npos) {
        std::string first = rest.substr(0, first_slash);
        if (first.find_first_of(".:") != std::string::npos || first == "localhost") {
            if (!std::regex_match(first, registry)) return std::nullopt;
            out.registry = first;
            rest.erase(0, first_slash + 1);
        }
    }
    if (out.registry.empty()) out.registry = "docker.io";
    if (rest.empty()) return std::nullopt;
    std::size_t start = 0;
    while (true) {
        auto end = rest.find('/', start);
        std::string part = rest.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (!std::regex_match(part, component)) return std::nullopt;
        if (end == std::string::npos) break;
        start = end + 1;
    }
    out.repository = rest;
    return out;
}

} // namespace ddl
