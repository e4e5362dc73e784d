#include "targets/aws/AwsInputs.hpp"

#include "util/Strings.hpp"

namespace ddl {

// Defined in the build tree's TerraformModuleData.cpp (cmake/embed_files.cmake).
const std::map<std::string, std::string>& aws_module_files();

nlohmann::json AwsInputs::tfvars(const Spec& s, const std::string& public_key, const std::string& state_dir) {
    const auto& a = s.target_section<AwsSpec>();
    std::string key = trim(public_key);
    // worker_instance_type must be valid even without workers; the master's type is then never used.
    std::string worker_type = s.workers.flavor.empty() ? s.master.flavor : s.workers.flavor;
    // nlohmann::json objects are ordered by key, so the file has the same bytes every time.
    nlohmann::json vars = {{"cluster_name", s.name},
                           {"region", a.region},
                           {"profile", a.profile},
                           {"ssh_user", s.access.user},
                           {"ami_id", a.ami},
                           {"ami_owners", a.ami_owners},
                           {"ami_name_filter", a.ami_name},
                           {"master_instance_type", s.master.flavor},
                           {"worker_instance_type", worker_type},
                           {"worker_count", s.workers.count},
                           {"root_volume_gb", a.root_volume_gb},
                           {"root_volume_type", a.root_volume_type},
                           {"use_default_vpc", a.vpc == "default"},
                           {"network_cidr", a.vpc_cidr},
                           {"availability_zone", a.availability_zone},
                           {"allowed_cidrs", s.access.allowed_cidrs},
                           {"allow_any_source", s.access.allow_any_source},
                           {"spot", a.spot},
                           {"spot_max_price", a.spot_max_price},
                           {"placement_group", a.placement_group}};
    // Without a key the variable is left to the user, as Terraform users pass one: -var, TF_VAR_public_key.
    if (!key.empty()) vars["public_key"] = key;
    // An EC2 tag value holds 256 characters: a longer path is not recorded (gc then leaves the cluster
    // alone).
    if (!state_dir.empty() && state_dir.size() <= 256) vars["state_dir"] = state_dir;
    return vars;
}

const std::map<std::string, std::string>& AwsInputs::module_files() {
    return aws_module_files();
}

} // namespace ddl
