#pragma once
// Where a request stands in a test's record of the requests it answered (the order tests of `ddl gc`'s
// removals, OpenstackFoundTest and AwsFoundTest).
#include "util/Strings.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace ddl::test {

// The index of the first entry of `log` that starts with `line`; fails the test when there is none.
inline std::size_t log_index(const std::vector<std::string>& log, const std::string& line) {
    for (std::size_t i = 0; i < log.size(); ++i)
        if (starts_with(log[i], line)) return i;
    FAIL("no request " << line << " in:\n" << join(log, "\n"));
    return 0;
}

} // namespace ddl::test
