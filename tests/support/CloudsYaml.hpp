#pragma once
// The cloud configuration of the OpenStack target's tests: `clouds_yaml` written to DIR/clouds.yaml (0600)
// and the sources that find it there through OS_CLIENT_CONFIG_FILE, with no other file or variable read.
#include "targets/openstack/CloudConfig.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <string>

namespace ddl::test {

inline CloudConfig::Sources clouds_yaml_sources(const std::string& dir, const std::string& clouds_yaml) {
    const std::string file = dir + "/clouds.yaml";
    REQUIRE(write_file_atomic(file, clouds_yaml, 0600).ok());
    CloudConfig::Sources src;
    src.getenv = [file](const std::string& k) { return k == "OS_CLIENT_CONFIG_FILE" ? file : std::string(); };
    src.cwd = dir;
    src.home = dir;
    return src;
}

} // namespace ddl::test
