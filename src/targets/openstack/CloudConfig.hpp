#pragma once
// Finds and reads the user's clouds.yaml the way openstacksdk (and so the `openstack` CLI and the
// Terraform provider's `cloud` argument) does: the first of $OS_CLIENT_CONFIG_FILE, ./clouds.yaml,
// ~/.config/openstack/clouds.yaml, /etc/openstack/clouds.yaml (also .yml) that exists, merged with
// the first secure.yaml found in the same places ($OS_CLIENT_SECURE_FILE first). Credentials stay in
// memory; they are registered with the log's redactor as soon as they are read.
#include "targets/openstack/OpenstackClient.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ddl {

struct CloudConfig {
    std::string file; // the clouds.yaml used (absolute)
    std::string cloud;
    CloudAuth auth;

    // Where the environment and the file system come from; tests substitute them.
    struct Sources {
        std::function<std::string(const std::string&)> getenv; // "" when unset
        std::string cwd;
        std::string home;
    };
    static Sources system_sources();

    // The search list, in order.
    static std::vector<std::string> search_paths(const Sources& src);
    // Loads `cloud` from the first clouds.yaml found. Errors name the file, the key and the fix.
    static Result<CloudConfig> load(const std::string& cloud, const Sources& src);
    // The environment Terraform/OpenTofu gets so its provider reads the very same entry.
    std::map<std::string, std::string> terraform_env() const;
};

} // namespace ddl
