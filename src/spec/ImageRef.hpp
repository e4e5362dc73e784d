#pragma once
// Container image references as docker and podman read them: [registry[:port]/]path[:tag][@digest].
#include <optional>
#include <string>

namespace ddl {

struct ImageRef {
    std::string registry;   // as written, or "docker.io" when the reference names none
    std::string repository; // path below the registry, e.g. nvidia/pytorch
    std::string tag;        // empty when none (engines then use "latest")
    std::string digest;     // e.g. sha256:<64 hex>, empty when none
};

// Parses `text` with the grammar of the distribution reference library (lowercase path components
// separated by '.', '_', '__' or '-'; tags of word characters, '.' and '-' up to 128; sha256 digests);
// nullopt when it is not one. The first component is a registry when it has a '.' or ':' or is
// "localhost", as engines decide.
std::optional<ImageRef> parse_image_ref(const std::string& text);

} // namespace ddl
