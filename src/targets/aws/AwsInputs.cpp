#include "targets/aws/AwsInputs.hpp"

#include "terraform/TerraformInputs.hpp"

namespace ddl {

nlohmann::json AwsInputs::tfvars(const Spec& s, const std::string& public_key, const std::string& state_dir) {
    const auto& a = s.target_section<AwsSpec>();
    // state_dir is an EC2 tag value, which holds 256 characters; the VPC's network is aws.vpc_cidr.
    nlohmann::json vars = shared_tfvars(s, public_key, state_dir,
                                        {256, a.vpc_cidr, "master_instance_type", "worker_instance_type"});
    // Where: the region (with the profile's credentials), the zone and the VPC.
    vars.update({{"region", a.region}, {"profile", a.profile}, {"availability_zone", a.availability_zone}});
    vars["use_default_vpc"] = a.vpc == "default";
    // The image: ami_id, else the newest image named like ami_name_filter that one of ami_owners owns.
    vars.update({{"ami_id", a.ami}, {"ami_owners", a.ami_owners}, {"ami_name_filter", a.ami_name}});
    // The root volumes, and how the instances are bought and placed.
    vars.update({{"root_volume_gb", a.root_volume_gb}, {"root_volume_type", a.root_volume_type}});
    vars.update(
        {{"spot", a.spot}, {"spot_max_price", a.spot_max_price}, {"placement_group", a.placement_group}});
    return vars;
}

} // namespace ddl
