#include "targets/openstack/OpenstackInputs.hpp"

#include "util/Strings.hpp"

namespace ddl {

// Defined in the build tree's TerraformModuleData.cpp (cmake/embed_files.cmake).
const std::map<std::string, std::string>& openstack_module_files();

nlohmann::json OpenstackInputs::tfvars(const Spec& s, const std::string& public_key,
                                       const std::string& state_dir) {
    const auto& o = s.target_section<OpenstackSpec>();
    std::string key = trim(public_key);
    // worker_flavor must be non-empty even without workers; the master's flavor is then never used.
    std::string worker_flavor = s.workers.flavor.empty() ? s.master.flavor : s.workers.flavor;
    // nlohmann::json objects are ordered by key, so the file has the same bytes every time.
    nlohmann::json vars = {{"cluster_name", s.name},
                           {"cloud", o.cloud},
                           {"ssh_user", s.access.user},
                           {"image_name", o.image},
                           {"master_flavor", s.master.flavor},
                           {"worker_flavor", worker_flavor},
                           {"worker_count", s.workers.count},
                           {"boot_volume_gb", o.boot_volume_gb},
                           {"external_network", o.external_network},
                           {"network_name", o.network},
                           {"network_cidr", o.network_cidr},
                           {"dns_nameservers", o.dns_nameservers},
                           {"allowed_cidrs", s.access.allowed_cidrs},
                           {"allow_any_source", s.access.allow_any_source},
                           {"anti_affinity", o.anti_affinity}};
    // Without a key the variable is left to the user, as Terraform users pass one: -var, TF_VAR_public_key.
    if (!key.empty()) vars["public_key"] = key;
    // Nova metadata values hold 255 characters: a longer path is not recorded (gc then leaves the cluster
    // alone).
    if (!state_dir.empty() && state_dir.size() <= 255) vars["state_dir"] = state_dir;
    return vars;
}

nlohmann::json OpenstackInputs::backend(const Spec& s) {
    const auto& b = s.target_section<OpenstackSpec>().state_backend;
    nlohmann::json config;
    std::string type = b.type;
    if (type == "http") {
        // GitLab's managed state (the common CI case): lock with POST, unlock with DELETE on <address>/lock.
        // Without an address in the spec, Terraform takes TF_HTTP_ADDRESS, TF_HTTP_LOCK_ADDRESS and
        // TF_HTTP_UNLOCK_ADDRESS from the environment ("Backend Type: http", configuration variables).
        config = {{"lock_method", "POST"}, {"unlock_method", "DELETE"}, {"retry_wait_min", 5}};
        if (!b.address.empty()) {
            config["address"] = b.address;
            config["lock_address"] = b.address + "/lock";
            config["unlock_address"] = b.address + "/lock";
        }
    } else if (type == "s3") {
        config = {{"bucket", b.bucket}, {"key", b.key}};
        if (!b.region.empty()) config["region"] = b.region;
        if (!b.endpoint.empty()) {
            // An S3-compatible store (Ceph RGW, MinIO, an OpenStack cloud's object store): no AWS account,
            // region or metadata service to check, path-style bucket addressing.
            config["endpoints"] = {{"s3", b.endpoint}};
            if (b.region.empty()) config["region"] = "us-east-1";
            config["use_path_style"] = true;
            config["skip_credentials_validation"] = true;
            config["skip_region_validation"] = true;
            config["skip_requesting_account_id"] = true;
            config["skip_metadata_api_check"] = true;
            config["skip_s3_checksum"] = true;
        }
    } else {
        type = "local";
        config = {{"path", "terraform.tfstate"}};
    }
    return {{"terraform", {{"backend", {{type, config}}}}}};
}

const std::map<std::string, std::string>& OpenstackInputs::module_files() {
    return openstack_module_files();
}

} // namespace ddl
