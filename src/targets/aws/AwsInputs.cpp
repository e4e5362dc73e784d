#include "targets/aws/AwsInputs.hpp"

#include "terraform/TerraformInputs.hpp"

namespace ddl {

// Defined in the build tree's TerraformModuleData.cpp (cmake/embed_files.cmake).
const std::map<std::string, std::string>& aws_module_files();

nlohmann::json AwsInputs::tfvars(const Spec& s, const std::string& public_key, const std::string& state_dir) {
    const auto& a = s.target_section<AwsSpec>();
    // state_dir is an EC2 tag value, which holds 256 characters.
    nlohmann::json vars = shared_tfvars(s, public_key, state_dir, 256);
    vars.update({{"region", a.region},
                 {"profile", a.profile},
                 {"ami_id", a.ami},
                 {"ami_owners", a.ami_owners},
                 {"ami_name_filter", a.ami_name},
                 {"master_instance_type", s.master.flavor},
                 {"worker_instance_type", worker_flavor_or_master(s)},
                 {"root_volume_gb", a.root_volume_gb},
                 {"root_volume_type", a.root_volume_type},
                 {"use_default_vpc", a.vpc == "default"},
                 {"network_cidr", a.vpc_cidr},
                 {"availability_zone", a.availability_zone},
                 {"spot", a.spot},
                 {"spot_max_price", a.spot_max_price},
                 {"placement_group", a.placement_group}});
    return vars;
}

const std::map<std::string, std::string>& AwsInputs::module_files() {
    return aws_module_files();
}

} // namespace ddl
