// libFuzzer target: the Virtual Wall manifest RSpec parser on arbitrary bytes. It must accept or refuse
// with a reason; every login it accepts has a port in 1-65535.
#include "targets/virtualwall/RspecManifest.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view xml(reinterpret_cast<const char*>(data), size);
    auto m = ddl::parse_manifest(xml);
    if (!m) {
        if (m.error().message.empty()) __builtin_trap(); // refused without saying why
        return 0;
    }
    for (const auto& n : m->nodes)
        for (const auto& l : n.logins)
            if (l.port < 1 || l.port > 65535) __builtin_trap();
    return 0;
}
