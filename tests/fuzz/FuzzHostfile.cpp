// libFuzzer target: the hostfile parser (OpenMPI, Horovod and MPICH forms) on arbitrary bytes. Whatever
// it accepts must write back and parse again to the same hosts and slots.
#include "runtime/Hostfile.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto parsed = ddl::runtime::parse_hostfile(text, "fuzz");
    if (!parsed) return 0;
    for (auto fmt : {ddl::runtime::HostfileFormat::openmpi, ddl::runtime::HostfileFormat::horovod,
                     ddl::runtime::HostfileFormat::mpich}) {
        auto written = ddl::runtime::write_hostfile(*parsed, fmt);
        auto again = ddl::runtime::parse_hostfile(written, "rewritten");
        if (!again || again->size() != parsed->size()) __builtin_trap();
        for (std::size_t i = 0; i < parsed->size(); ++i) {
            if ((*again)[i].host != (*parsed)[i].host) __builtin_trap();
            if (fmt != ddl::runtime::HostfileFormat::mpich && (*again)[i].slots != (*parsed)[i].slots)
                __builtin_trap();
        }
    }
    return 0;
}
