#pragma once
// Hostfiles: which hosts run how many ranks.
//
// Reading accepts, line by line and mixed:
//   OpenMPI / Horovod:  host [slots=N] [max_slots=M]     ("max-slots" too; '#' comments, blank lines)
//   MPICH:              host[:N]   [v6addr]:N   [v6addr]   bare-v6addr (no count: it would be ambiguous)
// Hosts are IPv4, IPv6 or DNS names. A host listed twice gets the sum of its slots (as OpenMPI does).
// All problems are reported at once, each as "SOURCE:LINE: error: ...".
//
// Writing: openmpi (optional "# " header lines), horovod (strict: only "host slots=N" lines, because
// Horovod's parser fails on blank and comment lines), mpich ("host:N", IPv6 in brackets).
#include "util/Result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddl::runtime {

enum class HostfileFormat { openmpi, horovod, mpich };

struct HostfileEntry {
    std::string host; // without brackets
    int slots = 1;
    std::optional<int> max_slots;
    int line = 0; // where it was read (0 when built in code)

    bool operator==(const HostfileEntry& other) const {
        return host == other.host && slots == other.slots && max_slots == other.max_slots;
    }
};

[[nodiscard]] ddl::Result<std::vector<HostfileEntry>> parse_hostfile(std::string_view text,
                                                                     const std::string& source = "hostfile");
[[nodiscard]] ddl::Result<std::vector<HostfileEntry>> read_hostfile(const std::string& path);

// `header` lines become "# ..." comments in the openmpi format and are dropped by the others.
[[nodiscard]] std::string write_hostfile(const std::vector<HostfileEntry>& entries, HostfileFormat format,
                                         const std::vector<std::string>& header = {});

[[nodiscard]] std::optional<HostfileFormat> hostfile_format_from_name(std::string_view name);
[[nodiscard]] const char* hostfile_format_name(HostfileFormat format);

// Total slots over all entries.
[[nodiscard]] int total_slots(const std::vector<HostfileEntry>& entries);

} // namespace ddl::runtime
