#include "targets/local/LocalTarget.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

TEST_CASE("the shaped link's bucket is two milliseconds of line rate and never under 128 KiB") {
    CHECK(LocalTarget::tbf_burst_bytes(1'000'000'000) == 250'000);
    CHECK(LocalTarget::tbf_burst_bytes(10'000'000'000) == 2'500'000);
    CHECK(LocalTarget::tbf_burst_bytes(100'000'000) == 128 * 1024);
}

TEST_CASE("a node's sshd starts with PATH as its whole environment, none of ddl's") {
    const auto argv = LocalTarget::sshd_argv("ddl-c-master", "/state/c/nodes/master");
    REQUIRE(argv.size() > 4);
    CHECK(argv[0] == "env");
    CHECK(argv[1] == "-i");
    CHECK(argv[2] == "PATH=/usr/sbin:/usr/bin:/sbin:/bin");
    CHECK(argv[3] == "nsenter");
    CHECK(argv.back() == "/state/c/nodes/master/init.sh");
    // No other NAME=VALUE reaches it on the way (nsenter's and unshare's options are --name=value).
    for (std::size_t i = 3; i < argv.size(); ++i) {
        const bool assignment = argv[i].find('=') != std::string::npos && argv[i].rfind("--", 0) != 0;
        CHECK_FALSE(assignment);
    }
}
