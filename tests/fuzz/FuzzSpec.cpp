// libFuzzer target: the spec loader and validator on arbitrary bytes. Every input must give either a
// Spec or diagnostics; a Spec must serialize; nothing may crash, leak or trip a sanitizer.
#include "spec/SpecLoader.hpp"
#include "targets/Kinds.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    auto r = ddl::load_spec_string(text, "cluster.yaml");
    if (r.spec) {
        (void)r.spec->to_json().dump();
        (void)r.spec->node_count();
    } else if (!r.diagnostics.has_errors()) {
        __builtin_trap(); // refused without saying why
    }
    return 0;
}
