// libFuzzer target: Terraform's -json UI stream parser, fed the input split into lines. It promises never
// to throw and to accept any bytes; the failure text must be producible whatever arrived.
#include "terraform/TerraformStream.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    ddl::TerraformStream stream;
    while (!text.empty()) {
        auto nl = text.find('\n');
        (void)stream.feed_line(text.substr(0, nl));
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
    (void)stream.failure_text();
    (void)stream.failures();
    (void)stream.warnings();
    return 0;
}
