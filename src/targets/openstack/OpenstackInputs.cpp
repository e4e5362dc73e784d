#include "targets/openstack/OpenstackInputs.hpp"

#include "terraform/TerraformInputs.hpp"

namespace ddl {

nlohmann::json OpenstackInputs::tfvars(const Spec& s, const std::string& public_key,
                                       const std::string& state_dir) {
    const auto& o = s.target_section<OpenstackSpec>();
    // state_dir is a Nova metadata value, which holds 255 characters.
    nlohmann::json vars =
        shared_tfvars(s, public_key, state_dir, {255, o.network_cidr, "master_flavor", "worker_flavor"});
    vars.update({{"cloud", o.cloud},
                 {"image_name", o.image},
                 {"boot_volume_gb", o.boot_volume_gb},
                 {"external_network", o.external_network},
                 {"network_name", o.network},
                 {"dns_nameservers", o.dns_nameservers},
                 {"anti_affinity", o.anti_affinity}});
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

} // namespace ddl
